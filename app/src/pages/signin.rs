//! `/signin`: who this browser reads as, how to sign in to read private outputs (a
//! submitter's own, a maintainer's all), and signing out. Nothing here needs JavaScript:
//! a one-time link signs a browser in, a form signs it out.

use leptos::prelude::*;
use leptos_meta::{Meta, Title};

use crate::components::{loaded, query};

#[component]
pub(crate) fn SignInPage() -> impl IntoView {
    let problem = query("problem");
    let signed_in = Resource::new_blocking(|| (), |_| load_signed_in());
    view! {
        <Title text="Sign in"/>
        <Meta name="robots" content="noindex"/>
        <Meta name="description" content="Sign in to read the private outputs of your own runs on the RExBench leaderboard."/>
        <h1>"Sign in"</h1>
        {problem.map(|p| view! { <p class="notice" role="status">{problem_words(&p)}</p> })}
        {loaded(signed_in, |s| view! { <Status s=s/> })}
        <h2 id="why">"Why sign in"</h2>
        <p>
            "RExBench's dataset terms forbid making agent outputs public, so the patches, logs and trajectories of "
            "RExBench's runs are private: every number about them is public, and each output's SHA-256, but their "
            "content is shown only to the submitter whose key signed the bundle and to the benchmark's maintainers. "
            "Every read of private content is recorded."
        </p>
        <h2 id="submitters">"Submitters"</h2>
        <p>"Sign in with the key you sign your bundles with (it must be registered here); no password is involved:"</p>
        <pre><code>"rexbench login --server https://this.server --key my.pem"</code></pre>
        <p>
            "The server sends a challenge, your key signs it, and you get a token for the command line (saved for "
            <code>"rexbench runs download"</code>" and "<code>"rexbench audit"</code>", valid for an hour) and a "
            "one-time link: open it and press its button to sign this browser in. The browser's session ends when "
            "the token does (an hour), or when you sign out of either."
        </p>
        <h2 id="maintainers">"Maintainers"</h2>
        <p>
            "On the server, "<code>"rexbench-server sign-in-link"</code>" prints a one-time link; a maintainer's "
            "browser session lasts an hour at most, and "<code>"rexbench-server sessions revoke"</code>" ends any "
            "session (or all of them) at once. The admin token reads every private output through the API."
        </p>
    }
}

#[component]
fn Status(s: SignedIn) -> impl IntoView {
    match s.who {
        None => view! { <p>"You are not signed in: you see what anyone sees."</p> }.into_any(),
        Some(who) => view! {
            <p>
                {format!("You are signed in as {who}. ")}
                {if s.reads_as == "maintainer" {
                    "Run pages show you every run's outputs."
                } else {
                    "Run pages show you the outputs of the bundles your key signed."
                }}
            </p>
            <form method="post" action="/signout">
                <button type="submit">"Sign out"</button>
            </form>
        }
        .into_any(),
    }
}

fn problem_words(problem: &str) -> &'static str {
    match problem {
        "used" => {
            "That sign-in link was used already: each link opens one session. Sign in again for another."
        }
        "expired" => "That sign-in link expired (links last ten minutes). Sign in again for another.",
        "revoked" => "The key that sign-in link was made for has been revoked.",
        "parent-ended" => {
            "The session that sign-in link was made from has ended (signed out, revoked or expired). Sign in again."
        }
        "signed-out" => "You are signed out.",
        _ => "That sign-in link is not one this server made.",
    }
}

// What this page reads, through its server function (thin: its arguments → the view).

/// Who the sign-in page is for: `anyone`, `submitter` or `maintainer`, and who in words.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SignedIn {
    pub reads_as: String,
    pub who: Option<String>,
}

#[server(prefix = "/sfn", endpoint = "signin")]
pub async fn load_signed_in() -> Result<SignedIn, crate::error::AppError> {
    use views::access::Reader;
    let ctx = crate::data::context()?;
    let reads_as = match &ctx.reader {
        Reader::Public => "anyone",
        Reader::Maintainer { .. } => "maintainer",
        Reader::Submitter { .. } => "submitter",
    };
    Ok(SignedIn { reads_as: reads_as.into(), who: (!ctx.reader.is_public()).then(|| ctx.reader.who()) })
}
