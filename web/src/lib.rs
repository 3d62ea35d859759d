//! The islands' WebAssembly module. Leptos's island script imports it, calls
//! [`hydrate`] once, then each island's own export (made by `#[island]` in the app
//! crate, linked in from there) on its element.

use wasm_bindgen::prelude::wasm_bindgen;

// The islands live in the app crate; naming it links their exports into this module.
pub use app::islands;

/// Starts Leptos's reactive system for the islands; the rest of the page stays as the
/// server rendered it.
#[wasm_bindgen]
pub fn hydrate() {
    leptos::mount::hydrate_islands();
}
