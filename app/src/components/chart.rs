//! A chart drawn on the server (`charts`), in its figure with its caption.

use leptos::prelude::*;

/// A chart's SVG, drawn on the server, with the sentence that says what it shows.
#[component]
pub(crate) fn Chart(svg: String, caption: String) -> impl IntoView {
    view! {
        <figure class="chart">
            <div class="chart-svg" inner_html=svg></div>
            <figcaption>{caption}</figcaption>
        </figure>
    }
}
