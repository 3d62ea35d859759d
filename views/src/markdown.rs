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
    without_empty_heads(out)
}

/// A task card's README for its page, which has its own heading: the README without
/// its title (a first line `# …`), and the papers it extends (its `## Extends` section,
/// long citations) folded.
pub fn task_readme(markdown: &str) -> String {
    let body = match markdown.trim_start().strip_prefix("# ") {
        Some(rest) => rest.split_once('\n').map_or("", |(_, after)| after),
        None => markdown,
    };
    fold_section(to_html(body), "Extends", "Extends: the papers this task builds on")
}

/// The section under `<h2>{heading}</h2>` (up to the next level-two heading) as a
/// disclosure whose summary says `summary`.
fn fold_section(html: String, heading: &str, summary: &str) -> String {
    let head = format!("<h2>{heading}</h2>");
    let Some(start) = html.find(&head) else { return html };
    let after = start + head.len();
    let end = html[after..].find("<h2").map_or(html.len(), |i| after + i);
    format!(
        "{}<details class=\"sources\"><summary>{summary}</summary>{}</details>\n{}",
        &html[..start],
        &html[after..end],
        &html[end..]
    )
}

/// A key–value table written with an empty header row (`| | |`) reads better without
/// it, and a header cell with nothing in it tells a screen reader nothing.
fn without_empty_heads(html: String) -> String {
    const HEAD: &str = "<thead><tr>";
    let mut out = String::with_capacity(html.len());
    let mut rest = html.as_str();
    while let Some(start) = rest.find(HEAD) {
        let after = &rest[start + HEAD.len()..];
        let Some(end) = after.find("</tr></thead>") else { break };
        let cells = &after[..end];
        // Each cell is `<th …>` and nothing else.
        let empty = cells.split("</th>").all(|c| {
            c.is_empty() || (c.starts_with("<th") && c.ends_with('>') && c.matches('<').count() == 1)
        });
        out.push_str(&rest[..start]);
        if !empty {
            out.push_str(&rest[start..start + HEAD.len() + end + "</tr></thead>".len()]);
        }
        rest = &after[end + "</tr></thead>".len()..];
    }
    out.push_str(rest);
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
    use super::{task_readme, to_html};

    #[test]
    fn a_task_readme_loses_its_title_and_folds_its_citations() {
        let html = task_readme(
            "# Othello\n\n**The extension:** x\n\n## How a run is judged\n\ny\n\n## Extends\n\n- A. 2023. Paper.\n\n## After\n\nz\n",
        );
        assert!(!html.contains("<h1"), "{html}");
        assert!(html.starts_with("<p><strong>The extension:</strong>"), "{html}");
        assert!(
            html.contains("<details class=\"sources\"><summary>Extends: the papers this task builds on</summary>\n<ul>\n<li>A. 2023. Paper.</li>\n</ul>\n</details>\n<h2>After</h2>"),
            "{html}"
        );
        assert!(html.contains("<h2>How a run is judged</h2>"), "{html}");
        // Without a title or the section, the README is as it was.
        assert_eq!(task_readme("Plain text.\n"), to_html("Plain text.\n"));
    }

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
    fn an_empty_header_row_is_left_out() {
        let html = to_html(
            "| | |\n|---|---|\n| Extension type | Model |\n\n| a | |\n|---|---|\n| 1 | 2 |\n\n| **b** | |\n|---|---|\n| 3 | 4 |\n",
        );
        assert_eq!(html.matches("<thead>").count(), 2, "{html}");
        assert!(html.contains("<td>Extension type</td>"), "{html}");
        assert!(html.contains("<th>a</th>"), "{html}");
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
