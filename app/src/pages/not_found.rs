use leptos::prelude::*;
use leptos_meta::Title;

/// Any path the site does not have: a page that says so, with status 404.
#[component]
pub(crate) fn NotFound() -> impl IntoView {
    #[cfg(feature = "ssr")]
    if let Some(response) = use_context::<leptos_axum::ResponseOptions>() {
        response.set_status(http::StatusCode::NOT_FOUND);
    }
    view! {
        <Title text="Not found"/>
        <section class="error">
            <h1>"Not found"</h1>
            <p>"There is no page at this address."</p>
            <p><a href="/">"Back to the leaderboard"</a></p>
        </section>
    }
}
