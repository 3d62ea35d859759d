//! `/keys`: the key registry, public keys included, so anyone can check a signature.

use leptos::prelude::*;
use leptos_meta::{Meta, Title};
use store::KeyRecord;

use crate::components::{TierBadge, loaded};

#[component]
pub(crate) fn KeysPage() -> impl IntoView {
    let keys = Resource::new_blocking(|| (), |_| load_keys());
    view! {
        <Title text="Signing keys"/>
        <Meta name="description" content="Every key that signs results on the RExBench leaderboard, with its owner, trust tier and public key."/>
        <h1>"Signing keys"</h1>
        <p>
            "Every result here arrived in a bundle signed with one of these Ed25519 keys. Each submission's signed envelope is at "
            <code>"/api/v1/submissions/{bundle_id}/envelope"</code>" (linked from the agent pages); any DSSE implementation verifies it with the key below, and "
            <code>"rexbench audit"</code>" checks an agent's numbers against it. Also as "<a href="/api/v1/keys">"JSON"</a>"; how to check: "<a href="/about#checking-the-numbers">"About"</a>"."
        </p>
        {loaded(keys, |keys| view! { <Keys keys=keys/> })}
    }
}

#[component]
fn Keys(keys: Vec<KeyRecord>) -> impl IntoView {
    if keys.is_empty() {
        return view! { <p class="empty">"No key has been added yet."</p> }.into_any();
    }
    view! {
        <div class="table-wrap">
            <table class="keys">
                <caption>"Keys: id, owner, trust tier, when added and revoked, and the public key (PEM)."</caption>
                <thead>
                    <tr>
                        <th scope="col">"Key id"</th>
                        <th scope="col">"Owner"</th>
                        <th scope="col">"Tier"</th>
                        <th scope="col">"Added (UTC)"</th>
                        <th scope="col">"Revoked (UTC)"</th>
                        <th scope="col">"Public key"</th>
                    </tr>
                </thead>
                <tbody>
                    {keys.into_iter().map(|k| view! {
                        <tr id=format!("key-{}", k.keyid)>
                            <td><code class="keyid">{k.keyid.clone()}</code></td>
                            <td>{k.owner.clone()}</td>
                            <td><TierBadge tier=k.tier/></td>
                            <td>{k.added_at.clone()}</td>
                            <td>{k.revoked_at.clone().unwrap_or_else(|| "–".into())}</td>
                            <td><pre class="pem">{k.public_key.clone()}</pre></td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
    .into_any()
}

// What this page reads, through its server function (thin: its arguments → the view).

#[server(prefix = "/sfn", endpoint = "keys")]
pub async fn load_keys() -> Result<Vec<KeyRecord>, crate::error::AppError> {
    Ok(views::keys::list(&crate::data::context()?.store).await?)
}
