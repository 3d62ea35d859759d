//! The RExBench leaderboard's pages, rendered on the server by Leptos.
//!
//! Pages must work with JavaScript turned off: the server renders everything, and no
//! hydration script is sent. The `hydrate` feature stays so that interactive islands
//! can be added later.

mod pages;

use leptos::prelude::*;
use leptos_meta::{Link, Meta, MetaTags, Stylesheet, Title, provide_meta_context};
use leptos_router::components::{A, Route, Router, Routes};
use leptos_router::path;

use pages::{HomePage, NotFound};

/// The HTML document around every page.
pub fn shell() -> impl IntoView {
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <MetaTags/>
            </head>
            <body>
                <App/>
            </body>
        </html>
    }
}

#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    view! {
        <Stylesheet id="style" href="/style/main.css"/>
        <Link rel="icon" href="/favicon.svg" type_="image/svg+xml"/>
        <Meta name="color-scheme" content="light dark"/>
        <Title formatter=|page: String| if page.is_empty() { "RExBench leaderboard".to_owned() } else { format!("{page} · RExBench leaderboard") }/>
        <Router>
            <header class="site">
                <A href="/" attr:class="brand">"RExBench"</A>
                <span class="tagline">"Can coding agents implement research extensions?"</span>
            </header>
            <main>
                <Routes fallback=NotFound>
                    <Route path=path!("/") view=HomePage/>
                </Routes>
            </main>
            <footer class="site">
                <p>
                    "RExBench: Edwards et al., "
                    <a href="https://arxiv.org/abs/2506.22598">"arXiv:2506.22598"</a>
                    ". Results are submitted as signed bundles and verified on arrival."
                </p>
            </footer>
        </Router>
    }
}
