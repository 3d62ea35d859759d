//! Every page's frame: what it reads of its address, the status it answers with, its
//! body once its data have arrived, and the error page when they could not be had.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::{use_params_map, use_query_map};

use crate::error::AppError;

/// Sets the response's status (on the server; a no-op in a browser build).
pub(crate) fn set_status(code: u16) {
    #[cfg(feature = "ssr")]
    if let Some(response) = use_context::<leptos_axum::ResponseOptions>() {
        response.set_status(http::StatusCode::from_u16(code).expect("a valid status"));
    }
    #[cfg(not(feature = "ssr"))]
    let _ = code;
}

/// A path parameter of the current route.
pub(crate) fn param(name: &str) -> String {
    use_params_map().read_untracked().get(name).unwrap_or_default()
}

/// A query parameter, `None` when absent or empty.
pub(crate) fn query(name: &str) -> Option<String> {
    use_query_map().read_untracked().get(name).filter(|v| !v.is_empty())
}

/// Every non-empty value of a repeated query parameter (`?col=a&col=b`).
pub(crate) fn query_all(name: &str) -> Vec<String> {
    use_query_map()
        .read_untracked()
        .get_all(name)
        .unwrap_or_default()
        .into_iter()
        .filter(|v| !v.is_empty())
        .collect()
}

/// What a page shows when its data could not be had: a 404 for what does not exist,
/// a 500 without internals otherwise.
#[component]
pub(crate) fn ErrorPage(error: AppError) -> impl IntoView {
    match error {
        AppError::NotFound(message) => {
            set_status(404);
            view! {
                <Title text="Not found"/>
                <section class="error">
                    <h1>"Not found"</h1>
                    <p>{message}</p>
                    <p><a href="/">"Back to the leaderboard"</a></p>
                </section>
            }
            .into_any()
        }
        AppError::Forbidden(message) => {
            set_status(403);
            view! {
                <Title text="Not for you"/>
                <section class="error">
                    <h1>"This page is the maintainers'"</h1>
                    <p>{message}</p>
                    <p><a href="/signin">"Sign in"</a>" · "<a href="/">"Back to the leaderboard"</a></p>
                </section>
            }
            .into_any()
        }
        AppError::Internal | AppError::ServerFn(_) => {
            set_status(500);
            view! {
                <Title text="Something went wrong"/>
                <section class="error">
                    <h1>"Something went wrong"</h1>
                    <p>"The results could not be read just now. Please try again in a moment."</p>
                    <p><a href="/">"Back to the leaderboard"</a></p>
                </section>
            }
            .into_any()
        }
    }
}

/// A page's body once its data have arrived, or the error page if they could not be had.
pub(crate) fn loaded<T, V>(data: Resource<Result<T, AppError>>, body: fn(T) -> V) -> impl IntoView
where
    T: Clone + Send + Sync + serde::Serialize + serde::de::DeserializeOwned + 'static,
    V: IntoView + 'static,
{
    view! {
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                match data.await {
                    Ok(data) => body(data).into_any(),
                    Err(e) => view! { <ErrorPage error=e/> }.into_any(),
                }
            })}
        </Suspense>
    }
}
