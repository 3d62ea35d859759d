//! Markdown to HTML for task descriptions and the submission guide. Raw HTML in the
//! source is shown as text, and links and images keep only http(s), mailto and
//! relative targets, so the output is safe to insert as it is.

use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, html};

pub fn to_html(markdown: &str) -> String {
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_HEADING_ATTRIBUTES;
    let events = Parser::new_ext(markdown, options).map(|event| match event {
        Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
        Event::Start(Tag::Link { link_type, dest_url, title, id }) => {
            Event::Start(Tag::Link { link_type, dest_url: safe_target(dest_url), title, id })
        }
        Event::Start(Tag::Image { link_type, dest_url, title, id }) => {
            Event::Start(Tag::Image { link_type, dest_url: safe_target(dest_url), title, id })
        }
        other => other,
    });
    let mut out = String::with_capacity(markdown.len() * 3 / 2);
    html::push_html(&mut out, events);
    out
}

fn safe_target(url: CowStr<'_>) -> CowStr<'_> {
    let lower = url.trim().to_ascii_lowercase();
    let scheme = lower.split_once(':').map(|(s, _)| s).filter(|s| !s.contains(['/', '?', '#']));
    match scheme {
        None | Some("http" | "https" | "mailto") => url,
        Some(_) => CowStr::Borrowed("#"),
    }
}

#[cfg(test)]
mod tests {
    use super::to_html;

    #[test]
    fn renders_markdown() {
        let html = to_html(
            "# Title\n\n**bold** and [a link](https://example.org)\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
        );
        assert!(html.contains("<h1>Title</h1>"));
        assert!(html.contains("<strong>bold</strong>"));
        assert!(html.contains(r#"<a href="https://example.org">a link</a>"#));
        assert!(html.contains("<table>"));
    }

    #[test]
    fn raw_html_and_script_links_are_defused() {
        let html = to_html(
            "<script>alert(1)</script>\n\nText <img src=x onerror=alert(1)> [x](javascript:alert(1)) [y](JavaScript:alert(2)) ![i](data:image/svg+xml,x) [rel](../tasks/cogs)",
        );
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<img src=x"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
        assert!(!html.to_ascii_lowercase().contains("javascript:"), "{html}");
        assert!(!html.contains("data:image"), "{html}");
        assert!(html.contains(r#"href="../tasks/cogs""#), "{html}");
    }
}
