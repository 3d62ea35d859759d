//! The few browser calls the islands share, with errors as words.

use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{Document, Element, Event, Request, RequestCache, RequestInit, Response, Window};

pub(crate) fn window() -> Window {
    web_sys::window().expect("a browser window")
}

pub(crate) fn document() -> Document {
    window().document().expect("a document")
}

/// The element an event started at, or its nearest ancestor matching `selector`.
pub(crate) fn closest(ev: &Event, selector: &str) -> Option<Element> {
    ev.target()?.dyn_into::<Element>().ok()?.closest(selector).ok().flatten()
}

/// Every element under `root` matching `selector`, in document order.
pub(crate) fn all(root: &Element, selector: &str) -> Vec<Element> {
    let Ok(list) = root.query_selector_all(selector) else { return vec![] };
    (0..list.length()).filter_map(|i| list.item(i)?.dyn_into::<Element>().ok()).collect()
}

/// What a GET answered: its status, body and ETag.
#[derive(Debug)]
pub(crate) struct Fetched {
    pub status: u16,
    pub body: String,
    pub etag: Option<String>,
}

/// A GET of this site's `url`, past the browser's cache (the islands keep what they
/// need), sending `if_none_match` when given.
pub(crate) async fn get(url: &str, if_none_match: Option<&str>) -> Result<Fetched, String> {
    let init = RequestInit::new();
    init.set_method("GET");
    init.set_cache(RequestCache::NoStore);
    let request = Request::new_with_str_and_init(url, &init).map_err(words)?;
    if let Some(tag) = if_none_match {
        request.headers().set("If-None-Match", tag).map_err(words)?;
    }
    let response: Response = JsFuture::from(window().fetch_with_request(&request))
        .await
        .map_err(words)?
        .dyn_into()
        .map_err(words)?;
    let status = response.status();
    let etag = response.headers().get("ETag").ok().flatten();
    let body = if status == 304 {
        String::new()
    } else {
        JsFuture::from(response.text().map_err(words)?).await.map_err(words)?.as_string().unwrap_or_default()
    };
    Ok(Fetched { status, body, etag })
}

/// A browser error in words.
pub(crate) fn words(e: impl Into<JsValue>) -> String {
    let e: JsValue = e.into();
    e.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| format!("{e:?}"))
}
