//! "New results have arrived": every page asks, at most every 30 seconds and never
//! while its tab is hidden, whether the change log has moved past what the page shows,
//! and offers to reload. It never reloads on its own: a reader may be in the middle of
//! something.

use leptos::prelude::*;

/// How often a visible page asks.
const EVERY: std::time::Duration = std::time::Duration::from_secs(30);

/// The change log's newest entry: the only thing a poll reads (cached by the server,
/// answered 304 while nothing changed).
const HEAD: &str = "/api/v1/changes?limit=1";

#[island]
pub fn NewResults(
    /// The change log's newest sequence number when the page was rendered.
    seq: i64,
) -> impl IntoView {
    let arrived = RwSignal::new(false);
    Effect::new(move |_| watch(seq, arrived));
    view! {
        <div class="new-results" aria-live="polite">
            <Show when=move || arrived.get()>
                <p>
                    "New results have arrived since this page was shown. "
                    <button type="button" on:click=|_| { let _ = super::dom::window().location().reload(); }>
                        "Reload"
                    </button>
                </p>
            </Show>
        </div>
    }
}

/// Polls for a change log newer than `seq`, until one is seen.
fn watch(seq: i64, arrived: RwSignal<bool>) {
    use web_sys::VisibilityState;

    let etag = StoredValue::new(None::<String>);
    let last = StoredValue::new(js_sys::Date::now());
    let poll = move || {
        if arrived.get_untracked() || super::dom::document().visibility_state() != VisibilityState::Visible {
            return;
        }
        last.set_value(js_sys::Date::now());
        leptos::task::spawn_local(async move {
            let tag = etag.get_value();
            let Ok(answer) = super::dom::get(HEAD, tag.as_deref()).await else { return };
            if answer.status != 200 {
                return;
            }
            etag.set_value(answer.etag);
            let newest = serde_json::from_str::<serde_json::Value>(&answer.body)
                .ok()
                .and_then(|v| v["changes"][0]["seq"].as_i64());
            if newest.is_some_and(|n| n > seq) {
                arrived.set(true);
            }
        });
    };
    let _ = set_interval_with_handle(poll, EVERY);
    // A tab shown again asks at once if its last question is old: hidden, it asked nothing.
    let _ = window_event_listener_untyped("visibilitychange", move |_| {
        if js_sys::Date::now() - last.get_value() >= EVERY.as_millis() as f64 {
            poll();
        }
    });
}
