//! `/submit`, live: a bundle chosen or dropped is checked in the browser before anything
//! is sent — structure, every rule of the spec, artifact digests and the signature
//! against this server's trusted keys, by the bundle crate itself compiled to
//! WebAssembly and run in a worker that reads the file in chunks — and shows the error
//! code and sentence the server would answer. A bundle that passes uploads with its
//! progress shown, and the server's answer appears in place.

use leptos::prelude::*;
use serde::Deserialize;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::Closure;
use web_sys::{File, MessageEvent, Worker, WorkerOptions, WorkerType, XmlHttpRequest};

use crate::data::SubmitSetup;

/// Where a submission stands.
#[derive(Debug, Clone, PartialEq)]
enum Stage {
    Idle,
    Checking {
        done: f64,
        total: f64,
    },
    /// Checked here and found wanting: nothing is sent.
    Refused {
        code: String,
        message: String,
    },
    Checked {
        runs: u64,
        agent: String,
    },
    Sending {
        sent: f64,
        total: f64,
    },
    ServerChecking,
    Stored {
        agent: String,
        href: String,
        again: bool,
        /// The runs the board marked from the bundle alone (the answer's `marks`): each
        /// run's name and its marks, each a slug and what it says.
        marks: Vec<(String, Vec<(String, &'static str)>)>,
    },
    /// The server said no (or could not be reached).
    Failed {
        status: u16,
        code: String,
        message: String,
    },
}

#[island]
pub fn SubmitForm(setup: SubmitSetup) -> impl IntoView {
    let stage = RwSignal::new(Stage::Idle);
    let input = NodeRef::<leptos::html::Input>::new();
    let setup = StoredValue::new(setup);
    let ready = RwSignal::new(false);
    Effect::new(move |_| ready.set(true));

    // The file is the input's (a dropped one is put there too): DOM objects are not
    // kept where the server could drop them.
    let file = move || input.get_untracked().and_then(|i| i.files()).and_then(|f| f.get(0));
    let check = move |file: File| {
        stage.set(Stage::Checking { done: 0.0, total: file.size() });
        check_in_worker(file, setup.get_value(), stage);
    };
    let on_change = move |_| {
        if let Some(file) = file() {
            check(file);
        }
    };
    let on_drop = move |ev: web_sys::DragEvent| {
        ev.prevent_default();
        let files = ev.data_transfer().and_then(|d| d.files());
        if let (Some(files), Some(el)) = (files, input.get_untracked()) {
            el.set_files(Some(&files));
            if let Some(file) = files.get(0) {
                check(file);
            }
        }
    };
    let on_submit = move |ev: web_sys::SubmitEvent| {
        ev.prevent_default();
        match (stage.get_untracked(), file()) {
            (Stage::Checked { agent, .. }, Some(file)) => upload(file, agent, stage),
            (Stage::Idle, Some(file)) => check(file),
            _ => {}
        }
    };
    let busy =
        move || matches!(stage.get(), Stage::Checking { .. } | Stage::Sending { .. } | Stage::ServerChecking);

    view! {
        <form
            class="upload"
            method="post"
            action="/submit"
            enctype="multipart/form-data"
            data-ready=move || ready.get().then_some("")
            on:submit=on_submit
            on:dragover=|ev: web_sys::DragEvent| ev.prevent_default()
            on:drop=on_drop
        >
            <label for="bundle">"Result bundle (.tar.gz made by "<code>"rexbench pack"</code>")"</label>
            <input id="bundle" type="file" name="bundle" accept=".gz,.tgz,application/gzip" required node_ref=input on:change=on_change/>
            <button type="submit" disabled=busy>"Verify and submit"</button>
            <p class="muted small drop-hint">"Or drop the bundle here. It is checked in your browser before anything is sent."</p>
        </form>
        <div class="submit-state" aria-live="polite">{move || state_view(stage.get())}</div>
    }
}

fn state_view(stage: Stage) -> AnyView {
    let bar = |label: &'static str, done: f64, total: f64| {
        let pct = if total > 0.0 { (done / total * 100.0).min(100.0) } else { 0.0 };
        view! {
            <p class="progress-line">
                <progress max="100" value=format!("{pct:.0}") aria-label=label></progress>
                " "{format!("{label}: {} of {}", mb(done), mb(total))}
            </p>
        }
    };
    match stage {
        Stage::Idle => ().into_any(),
        Stage::Checking { done, total } => bar("Checking in your browser", done, total).into_any(),
        Stage::Refused { code, message } => view! {
            <div class="verdict refused" role="alert">
                <h2>"✗ The bundle was not accepted"</h2>
                <p>{message}</p>
                <p class="muted small">"Error code: "<code class="code">{code}</code>". Checked in your browser; nothing was sent."</p>
            </div>
        }
        .into_any(),
        Stage::Checked { runs, agent } => view! {
            <div class="verdict checked">
                <p>{format!("✓ The bundle checks out in your browser: {agent}, {runs} runs. Submit it to send it.")}</p>
            </div>
        }
        .into_any(),
        Stage::Sending { sent, total } => bar("Sending", sent, total).into_any(),
        Stage::ServerChecking => view! {
            <p class="progress-line"><progress aria-label="Verifying on the server"></progress>" Sent; verifying on the server…"</p>
        }
        .into_any(),
        Stage::Stored { agent, href, again, marks } => {
            let marked = (!marks.is_empty()).then(|| {
                let runs = marks
                    .into_iter()
                    .map(|(run, marks)| {
                        let marks = marks
                            .into_iter()
                            .map(|(slug, says)| view! { <li><code class="code">{slug}</code>{format!(": {says}")}</li> })
                            .collect_view();
                        view! { <li>{run}<ul>{marks}</ul></li> }
                    })
                    .collect_view();
                view! {
                    <div class="marks">
                        <p>"The board marks these runs: they are shown, but count for less than they state ("<a href="/about#cost">"what a mark does"</a>")."</p>
                        <ul>{runs}</ul>
                    </div>
                }
            });
            view! {
                <div class="verdict accepted" role="status">
                    <h2>{if again { "✓ Already stored" } else { "✓ Stored" }}</h2>
                    <p>
                        {if again { "The server had this bundle already; nothing changed. " } else { "The results are on the leaderboard. " }}
                        <a href=href>{format!("See {agent}")}</a>
                    </p>
                    {marked}
                </div>
            }
            .into_any()
        }
        Stage::Failed { status, code, message } => view! {
            <div class="verdict refused" role="alert">
                <h2>"✗ The bundle was not accepted"</h2>
                <p>{message}</p>
                <p class="muted small">"Error code: "<code class="code">{code}</code>{format!(" (HTTP {status}). Nothing was stored.")}</p>
            </div>
        }
        .into_any(),
    }
}

fn mb(bytes: f64) -> String {
    if bytes < 1e6 { format!("{:.0} KB", bytes / 1e3) } else { format!("{:.1} MB", bytes / 1e6) }
}

/// What the worker answers: progress as it reads, then its verdict.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
enum FromWorker {
    Progress { done: f64, total: f64 },
    Valid { runs: u64, agent: String },
    Invalid { code: String, message: String },
}

fn check_in_worker(file: File, setup: SubmitSetup, stage: RwSignal<Stage>) {
    let failed = move |message: String| {
        stage.set(Stage::Refused { code: "browser_check_failed".into(), message });
    };
    let options = WorkerOptions::new();
    options.set_type(WorkerType::Module);
    let worker = match Worker::new_with_options(&setup.worker, &options) {
        Ok(w) => w,
        Err(e) => return failed(format!("the browser could not start the check: {}", super::dom::words(e))),
    };
    let handle = worker.clone();
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
        let text = ev.data().as_string().unwrap_or_default();
        match serde_json::from_str::<FromWorker>(&text) {
            Ok(FromWorker::Progress { done, total }) => stage.set(Stage::Checking { done, total }),
            Ok(FromWorker::Valid { runs, agent }) => {
                stage.set(Stage::Checked { runs, agent });
                handle.terminate();
            }
            Ok(FromWorker::Invalid { code, message }) => {
                stage.set(Stage::Refused { code, message });
                handle.terminate();
            }
            Err(e) => {
                stage.set(Stage::Refused { code: "browser_check_failed".into(), message: e.to_string() });
                handle.terminate();
            }
        }
    });
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    let message = js_sys::Object::new();
    let setup = serde_json::to_string(&setup).unwrap_or_default();
    let _ = js_sys::Reflect::set(&message, &"file".into(), &file);
    let _ = js_sys::Reflect::set(&message, &"setup".into(), &setup.into());
    if let Err(e) = worker.post_message(&message) {
        failed(format!("the browser could not start the check: {}", super::dom::words(e)));
    }
}

/// Sends the bundle as the API takes it, reporting the bytes sent, then the answer.
fn upload(file: File, agent: String, stage: RwSignal<Stage>) {
    let failed = move |message: String| {
        stage.set(Stage::Failed { status: 0, code: "network_error".into(), message });
    };
    let Ok(xhr) = XmlHttpRequest::new() else {
        return failed("the browser could not send the bundle".into());
    };
    if let Err(e) = xhr.open("POST", "/api/v1/submissions") {
        return failed(super::dom::words(e));
    }
    let _ = xhr.set_request_header("Content-Type", "application/gzip");
    let _ = xhr.set_request_header("Accept", "application/json");
    let total = file.size();
    stage.set(Stage::Sending { sent: 0.0, total });
    if let Ok(up) = xhr.upload() {
        let progress =
            Closure::<dyn FnMut(web_sys::ProgressEvent)>::new(move |ev: web_sys::ProgressEvent| {
                stage.set(Stage::Sending { sent: ev.loaded(), total });
            });
        up.set_onprogress(Some(progress.as_ref().unchecked_ref()));
        progress.forget();
        let sent =
            Closure::<dyn FnMut(web_sys::ProgressEvent)>::new(move |_| stage.set(Stage::ServerChecking));
        up.set_onload(Some(sent.as_ref().unchecked_ref()));
        sent.forget();
    }
    let answered = xhr.clone();
    let done = Closure::<dyn FnMut(web_sys::ProgressEvent)>::new(move |_| {
        let status = answered.status().unwrap_or(0);
        let body = answered.response_text().ok().flatten().unwrap_or_default();
        stage.set(answer(status, &body, &agent));
    });
    xhr.set_onload(Some(done.as_ref().unchecked_ref()));
    done.forget();
    let lost = Closure::<dyn FnMut(web_sys::ProgressEvent)>::new(move |_| {
        failed("the connection to the server was lost while sending; nothing was stored".into())
    });
    xhr.set_onerror(Some(lost.as_ref().unchecked_ref()));
    lost.forget();
    if let Err(e) = xhr.send_with_opt_blob(Some(&file)) {
        failed(super::dom::words(e));
    }
}

/// A marked run as the page names runs: its task, its hint and its attempt.
fn run_name(r: &bundle::RunMarks) -> String {
    format!("{} · {} · attempt {}", r.task, r.hint.label(), r.attempt)
}

/// A mark and what it says.
fn said(slug: String) -> (String, &'static str) {
    let says = match slug.parse::<bundle::CostMark>() {
        Ok(mark) => mark.sentence(),
        Err(_) if slug == "copied-attempt" => "its patch is another attempt's of the task, however written",
        Err(_) => "a mark this page does not know",
    };
    (slug, says)
}

/// The stage the server's answer puts the submission in.
fn answer(status: u16, body: &str, agent: &str) -> Stage {
    let json: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
    if status == 200 || status == 201 {
        let agent = agent.to_owned();
        // The agent's page saying this submission arrived, as after the plain form.
        let href = match (json["agent_id"].as_str(), json["bundle_id"].as_str()) {
            (Some(id), bundle) => views::format::href(
                &format!("/agents/{}", views::format::segment(id)),
                &[("submitted", bundle)],
            ),
            _ => "/".to_owned(),
        };
        let marks =
            serde_json::from_value::<Vec<bundle::RunMarks>>(json["marks"].clone()).unwrap_or_default();
        let marks =
            marks.into_iter().map(|r| (run_name(&r), r.marks.into_iter().map(said).collect())).collect();
        return Stage::Stored { agent, href, again: status == 200, marks };
    }
    Stage::Failed {
        status,
        code: json["error"]["code"].as_str().unwrap_or("unexpected_answer").to_owned(),
        message: json["error"]["message"]
            .as_str()
            .map(str::to_owned)
            .unwrap_or_else(|| format!("the server answered HTTP {status}")),
    }
}
