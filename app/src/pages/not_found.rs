use leptos::prelude::*;

use crate::components::ErrorPage;
use crate::error::AppError;

/// Any path the site does not have: a page that says so, with status 404.
#[component]
pub(crate) fn NotFound() -> impl IntoView {
    view! { <ErrorPage error=AppError::NotFound("There is no page at this address.".into())/> }
}
