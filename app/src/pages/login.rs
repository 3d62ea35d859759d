//! `/login/{ticket}`: a one-time sign-in link's page. Opening it signs nobody in (a link
//! previewer, or a link on another site, would otherwise spend it, or sign a visitor in
//! as someone else): its button sends the form that does, from this site only.

use leptos::prelude::*;
use leptos_meta::{Meta, Title};

use crate::components::param;
use views::format;

#[component]
pub(crate) fn SignInLinkPage() -> impl IntoView {
    let ticket = param("ticket");
    let action = format!("/login/{}", format::segment(&ticket));
    view! {
        <Title text="Sign in with a link"/>
        <Meta name="robots" content="noindex"/>
        <Meta name="referrer" content="no-referrer"/>
        <h1>"Sign in with a link"</h1>
        <p>
            "This one-time link signs this browser in to read private outputs: yours if it was made by "
            <code>"rexbench login"</code>" with your key, every run's if a maintainer made it. "
            "Nothing has happened yet; the button below signs in, once."
        </p>
        <form method="post" action=action>
            <button type="submit">"Sign in"</button>
        </form>
        <p class="note">
            "Did not ask for this link? Do not press the button: whoever made it would be the one you read as. "
            <a href="/signin">"How signing in works"</a>
        </p>
    }
}
