//! Charts drawn on the server with plotters as SVG, inserted into the page as they
//! are. Plotters escapes the text it draws; every chart also gets a title for screen
//! readers, and each page shows the same numbers in a table.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Colours of the hint conditions (no hints, hints, detailed hints); the markers'
/// shapes tell them apart too.
const HINT_COLOURS: [RGBColor; 3] = [RGBColor(100, 116, 139), RGBColor(37, 99, 235), RGBColor(217, 119, 6)];

/// Colours of the failed outcomes, in `Outcome::ALL` order after success.
const OUTCOME_COLOURS: [RGBColor; 6] = [
    RGBColor(220, 38, 38),
    RGBColor(245, 158, 11),
    RGBColor(139, 92, 246),
    RGBColor(14, 165, 233),
    RGBColor(100, 116, 139),
    RGBColor(163, 163, 163),
];

const FONT: (&str, u32) = ("sans-serif", 13);
const ROW: u32 = 26;

/// A dot plot: one row per label, success under each hint condition on 0–100%, the
/// three joined by a line (a dumbbell).
pub fn hint_dots(title: &str, rows: &[(String, [Option<f64>; 3])]) -> String {
    let label_w = 260;
    let (w, h) = (760u32, 44 + ROW * rows.len().max(1) as u32 + 30);
    let x = |r: f64| label_w as i32 + (r.clamp(0.0, 1.0) * f64::from(w - label_w - 30)) as i32;
    svg(title, w, h, |root| {
        let grid = ShapeStyle::from(RGBColor(203, 213, 225)).stroke_width(1);
        for tick in 0..=4 {
            let r = f64::from(tick) / 4.0;
            root.draw(&PathElement::new(vec![(x(r), 30), (x(r), h as i32 - 24)], grid))?;
            let text = format!("{}%", tick * 25);
            root.draw(&Text::new(text, (x(r), h as i32 - 8), text_style(HPos::Center)))?;
        }
        legend(root, label_w as i32, 10, &["No hints", "Hints", "Detailed hints"], |i, at| {
            marker(root, i, at)
        })?;
        for (i, (label, rates)) in rows.iter().enumerate() {
            let y = 44 + (i as u32 * ROW) as i32;
            root.draw(&Text::new(clip(label, 36), (label_w as i32 - 10, y), text_style(HPos::Right)))?;
            let xs: Vec<i32> = rates.iter().flatten().map(|r| x(*r)).collect();
            if let (Some(lo), Some(hi)) = (xs.iter().min(), xs.iter().max()) {
                let bar = ShapeStyle::from(RGBColor(148, 163, 184)).stroke_width(3);
                root.draw(&PathElement::new(vec![(*lo, y), (*hi, y)], bar))?;
            }
            for (k, rate) in rates.iter().enumerate() {
                if let Some(r) = rate {
                    marker(root, k, (x(*r), y))?;
                }
            }
        }
        Ok(())
    })
}

/// A grid of success rates: one row per task, one column per hint condition, each
/// cell shaded by its rate and labelled with it.
pub fn heatmap(title: &str, columns: &[&str], rows: &[(String, Vec<Option<f64>>)]) -> String {
    let label_w = 230i32;
    let cell_w = 150i32;
    let (w, h) = ((label_w + cell_w * columns.len() as i32 + 10) as u32, 34 + ROW * rows.len().max(1) as u32);
    svg(title, w, h, |root| {
        for (c, name) in columns.iter().enumerate() {
            let cx = label_w + cell_w * c as i32 + cell_w / 2;
            root.draw(&Text::new(name.to_string(), (cx, 16), text_style(HPos::Center)))?;
        }
        for (i, (label, rates)) in rows.iter().enumerate() {
            let y0 = 28 + ROW as i32 * i as i32;
            root.draw(&Text::new(
                clip(label, 30),
                (label_w - 10, y0 + ROW as i32 / 2),
                text_style(HPos::Right),
            ))?;
            for (c, rate) in rates.iter().enumerate() {
                let x0 = label_w + cell_w * c as i32;
                let fill = match rate {
                    Some(r) => RGBColor(
                        (239.0 - 202.0 * r) as u8,
                        (246.0 - 147.0 * r) as u8,
                        (255.0 - 20.0 * r) as u8,
                    ),
                    None => RGBColor(241, 245, 249),
                };
                root.draw(&Rectangle::new(
                    [(x0 + 1, y0 + 1), (x0 + cell_w - 1, y0 + ROW as i32 - 1)],
                    fill.filled(),
                ))?;
                let text = rate.map_or_else(|| "no runs".to_owned(), |r| format!("{:.0}%", r * 100.0));
                let ink = if rate.is_some_and(|r| r > 0.55) { WHITE } else { BLACK };
                let style =
                    TextStyle::from(FONT.into_font()).color(&ink).pos(Pos::new(HPos::Center, VPos::Center));
                root.draw(&Text::new(text, (x0 + cell_w / 2, y0 + ROW as i32 / 2), style))?;
            }
        }
        Ok(())
    })
}

/// Horizontal bars, one per label, stacked by failed outcome; `names` are the
/// outcomes' words in order and each row gives a count per outcome.
pub fn stacked_bars(title: &str, names: &[&str], rows: &[(String, Vec<i64>)]) -> String {
    let label_w = 260i32;
    let (w, h) = (760u32, 50 + ROW * rows.len().max(1) as u32 + 10);
    let most = rows.iter().map(|(_, c)| c.iter().sum::<i64>()).max().unwrap_or(0).max(1);
    let scale = f64::from(w as i32 - label_w - 60) / most as f64;
    svg(title, w, h, |root| {
        legend(root, 20, 10, names, |i, (x, y)| {
            root.draw(&Rectangle::new([(x - 6, y - 6), (x + 6, y + 6)], OUTCOME_COLOURS[i % 6].filled()))
        })?;
        for (i, (label, counts)) in rows.iter().enumerate() {
            let y0 = 44 + ROW as i32 * i as i32;
            root.draw(&Text::new(
                clip(label, 36),
                (label_w - 10, y0 + ROW as i32 / 2),
                text_style(HPos::Right),
            ))?;
            let mut x0 = label_w;
            for (k, n) in counts.iter().enumerate().filter(|(_, n)| **n > 0) {
                let len = ((*n as f64) * scale).round().max(1.0) as i32;
                root.draw(&Rectangle::new(
                    [(x0, y0 + 3), (x0 + len, y0 + ROW as i32 - 3)],
                    OUTCOME_COLOURS[k % 6].filled(),
                ))?;
                if len >= 22 {
                    let style = TextStyle::from(FONT.into_font())
                        .color(&WHITE)
                        .pos(Pos::new(HPos::Center, VPos::Center));
                    root.draw(&Text::new(n.to_string(), (x0 + len / 2, y0 + ROW as i32 / 2), style))?;
                }
                x0 += len;
            }
            let total: i64 = counts.iter().sum();
            root.draw(&Text::new(total.to_string(), (x0 + 6, y0 + ROW as i32 / 2), text_style(HPos::Left)))?;
        }
        Ok(())
    })
}

/// One agent on the cost–success chart: mean cost per run (US dollars), final success
/// and its interval (low, high).
#[derive(Debug, Clone, PartialEq)]
pub struct CostPoint {
    pub label: String,
    pub cost: f64,
    pub success: f64,
    pub interval: Option<(f64, f64)>,
}

/// The points no other point beats on both counts (as cheap or cheaper and as
/// successful or more, better on at least one), cheapest first: the cost–success
/// frontier.
pub fn frontier(points: &[CostPoint]) -> Vec<usize> {
    let beats = |a: &CostPoint, b: &CostPoint| {
        a.cost <= b.cost && a.success >= b.success && (a.cost < b.cost || a.success > b.success)
    };
    let mut on: Vec<usize> =
        (0..points.len()).filter(|&i| !points.iter().any(|p| beats(p, &points[i]))).collect();
    on.sort_by(|&a, &b| {
        points[a].cost.total_cmp(&points[b].cost).then(points[a].success.total_cmp(&points[b].success))
    });
    on
}

/// Final success (0–100%, with each interval as a vertical bar) against mean cost per
/// run on a logarithmic scale (agents' costs span orders of magnitude), one dot per
/// agent, the frontier drawn as a line through its agents (who are named on the chart;
/// the table names every agent). A cost of zero is drawn at the axis's left end.
pub fn cost_success(title: &str, points: &[CostPoint]) -> String {
    let (w, h) = (760u32, 420u32);
    let (left, right, top, bottom) = (60i32, 30i32, 40i32, 50i32);
    let (lo, hi) = decades(points.iter().map(|p| p.cost));
    let span = (hi / lo).log10();
    let x = |c: f64| {
        let at = if c <= lo { 0.0 } else { ((c / lo).log10() / span).min(1.0) };
        left + (at * f64::from(w as i32 - left - right)) as i32
    };
    let y = |r: f64| h as i32 - bottom - (r.clamp(0.0, 1.0) * f64::from(h as i32 - top - bottom)) as i32;
    let on = frontier(points);
    svg(title, w, h, |root| {
        let grid = ShapeStyle::from(RGBColor(203, 213, 225)).stroke_width(1);
        for tick in 0..=4 {
            let r = f64::from(tick) / 4.0;
            root.draw(&PathElement::new(vec![(left, y(r)), (w as i32 - right, y(r))], grid))?;
            root.draw(&Text::new(format!("{}%", tick * 25), (left - 8, y(r)), text_style(HPos::Right)))?;
        }
        for tick in ticks(lo, hi) {
            root.draw(&PathElement::new(vec![(x(tick), top), (x(tick), h as i32 - bottom)], grid))?;
            root.draw(&Text::new(money(tick), (x(tick), h as i32 - bottom + 14), text_style(HPos::Center)))?;
        }
        root.draw(&Text::new(
            "Mean cost per run (US dollars, logarithmic scale)".to_owned(),
            ((left + w as i32 - right) / 2, h as i32 - 12),
            text_style(HPos::Center),
        ))?;
        root.draw(&Text::new("Final success".to_owned(), (left, top - 20), text_style(HPos::Left)))?;
        let frontier_style = ShapeStyle::from(HINT_COLOURS[1]).stroke_width(2);
        let line: Vec<(i32, i32)> = on.iter().map(|&i| (x(points[i].cost), y(points[i].success))).collect();
        if line.len() > 1 {
            root.draw(&PathElement::new(line, frontier_style))?;
        }
        let bar = ShapeStyle::from(RGBColor(148, 163, 184)).stroke_width(2);
        for (i, p) in points.iter().enumerate() {
            let px = x(p.cost);
            if let Some((lo, hi)) = p.interval {
                root.draw(&PathElement::new(vec![(px, y(lo)), (px, y(hi))], bar))?;
            }
            let colour = if on.contains(&i) { HINT_COLOURS[1] } else { HINT_COLOURS[0] };
            root.draw(&Circle::new((px, y(p.success)), 5, colour.filled()))?;
        }
        for &i in &on {
            let p = &points[i];
            root.draw(&Text::new(
                clip(&p.label, 28),
                (x(p.cost) + 8, y(p.success) - 9),
                text_style(HPos::Left),
            ))?;
        }
        Ok(())
    })
}

/// A curve of rates over k = 1, 2, … (pass@k or pass^k): one line per hint condition,
/// given by its position in `Hint::ALL` and its rate at each k, on 0–100%.
pub fn curves(title: &str, lines: &[(usize, Vec<f64>)]) -> String {
    let (w, h) = (420u32, 260u32);
    let (left, right, top, bottom) = (48, w as i32 - 20, 34, h as i32 - 40);
    let most = lines.iter().map(|(_, v)| v.len()).max().unwrap_or(1).max(2);
    let x = |k: usize| left + ((k - 1) as f64 / (most - 1) as f64 * f64::from(right - left)) as i32;
    let y = |r: f64| bottom - (r.clamp(0.0, 1.0) * f64::from(bottom - top)) as i32;
    svg(title, w, h, |root| {
        let grid = ShapeStyle::from(RGBColor(203, 213, 225)).stroke_width(1);
        for tick in 0..=4 {
            let r = f64::from(tick) / 4.0;
            root.draw(&PathElement::new(vec![(left, y(r)), (right, y(r))], grid))?;
            root.draw(&Text::new(format!("{}%", tick * 25), (left - 6, y(r)), text_style(HPos::Right)))?;
        }
        for k in 1..=most {
            root.draw(&Text::new(format!("k = {k}"), (x(k), bottom + 16), text_style(HPos::Center)))?;
        }
        let names = ["No hints", "Hints", "Detailed"];
        let shown: Vec<&str> = lines.iter().map(|(i, _)| names[*i % 3]).collect();
        legend(root, left - 8, 8, &shown, |i, at| marker(root, lines[i].0, at))?;
        for (hint, rates) in lines {
            let points: Vec<(i32, i32)> = rates.iter().enumerate().map(|(k, r)| (x(k + 1), y(*r))).collect();
            root.draw(&PathElement::new(
                points.clone(),
                ShapeStyle::from(HINT_COLOURS[*hint % 3]).stroke_width(2),
            ))?;
            for p in points {
                marker(root, *hint, p)?;
            }
        }
        Ok(())
    })
}

/// The powers of ten just below the smallest positive cost and just above the largest.
fn decades(costs: impl Iterator<Item = f64>) -> (f64, f64) {
    let positive: Vec<f64> = costs.filter(|c| *c > 0.0 && c.is_finite()).collect();
    let smallest = positive.iter().copied().fold(f64::INFINITY, f64::min);
    let largest = positive.iter().copied().fold(0.0, f64::max);
    if positive.is_empty() {
        return (0.01, 1.0);
    }
    let lo = 10f64.powf(smallest.log10().floor());
    let hi = 10f64.powf(largest.log10().ceil()).max(lo * 10.0);
    (lo, hi)
}

/// Gridlines: every power of ten, and 5× (and 2× over a decade or two) where the axis
/// spans few decades.
fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    let decades = (hi / lo).log10().round() as i32;
    let steps: &[f64] = match decades {
        ..=2 => &[1.0, 2.0, 5.0],
        3 => &[1.0, 5.0],
        _ => &[1.0],
    };
    let mut out = Vec::new();
    for d in 0..=decades {
        let base = lo * 10f64.powi(d);
        for m in steps {
            if base * m <= hi * 1.000_001 {
                out.push(base * m);
            }
        }
    }
    out
}

/// A tick's amount: as many decimals as it needs.
fn money(c: f64) -> String {
    let decimals = if c >= 1.0 { 0 } else { (-c.log10().floor()) as usize };
    format!("${c:.decimals$}")
}

type Root<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;
type Drawn = Result<(), DrawingAreaErrorKind<std::io::Error>>;

fn svg(title: &str, w: u32, h: u32, draw: impl FnOnce(&Root<'_>) -> Drawn) -> String {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (w, h)).into_drawing_area();
        // Drawing into a string cannot fail but for a bug; a chart missing its marks
        // is better than a page missing altogether.
        let _ = draw(&root);
        let _ = root.present();
    }
    let (font, body) = compact(out.find('>').map_or(&out[..0], |end| &out[end + 1..]));
    // Scales with its container, says what it shows, and sets the font its text shares.
    format!(
        r#"<svg class="chart" role="img" viewBox="0 0 {w} {h}" xmlns="http://www.w3.org/2000/svg"{font}><title>{}</title>{body}"#,
        views::format::escape_html(title)
    )
}

/// Plotters' SVG without what it repeats on every element: the font every text
/// shares (returned, to be set once on the root, whence it inherits), an opacity of
/// 1, a stroke width where there is no stroke, a black fill of text (the initial
/// value, which the style sheet turns to the theme's), and the line breaks around
/// each text. Only tags are touched (plotters escapes `<` in text), so what is drawn
/// and written is unchanged; the charts are a third lighter.
fn compact(svg: &str) -> (String, String) {
    let font = svg
        .find(" font-family=\"")
        .and_then(|at| {
            let size = at + svg[at..].find(" font-size=\"")?;
            let end = size + 12 + svg[size + 12..].find('"')?;
            Some(svg[at..=end].to_owned())
        })
        .unwrap_or_default();
    let mut body = String::with_capacity(svg.len());
    let mut rest = svg;
    while let Some(open) = rest.find('<') {
        body.push_str(rest[..open].trim_matches('\n'));
        let Some(close) = rest[open..].find('>').map(|c| open + c + 1) else { break };
        let mut tag = rest[open..close].replace(" opacity=\"1\"", "");
        tag = tag.replace(" stroke=\"none\" stroke-width=\"1\"", " stroke=\"none\"");
        if tag.starts_with("<text ") {
            if !font.is_empty() {
                tag = tag.replace(&font, "");
            }
            tag = tag.replace(" fill=\"#000000\"", "");
        }
        body.push_str(&tag);
        rest = &rest[close..];
    }
    body.push_str(rest.trim_matches('\n'));
    (font, body)
}

fn marker(root: &Root<'_>, hint: usize, (x, y): (i32, i32)) -> Drawn {
    let colour = HINT_COLOURS[hint % 3];
    match hint {
        0 => root.draw(&Circle::new((x, y), 6, colour.filled())),
        1 => root.draw(&TriangleMarker::new((x, y), 8, colour.filled())),
        _ => root.draw(&Rectangle::new([(x - 5, y - 5), (x + 5, y + 5)], colour.filled())),
    }
}

fn legend(
    root: &Root<'_>,
    x: i32,
    y: i32,
    names: &[&str],
    mut key: impl FnMut(usize, (i32, i32)) -> Drawn,
) -> Drawn {
    let mut at = x + 8;
    for (i, name) in names.iter().enumerate() {
        key(i, (at, y + 6))?;
        root.draw(&Text::new(name.to_string(), (at + 12, y + 6), text_style(HPos::Left)))?;
        at += 24 + 7 * name.chars().count() as i32;
    }
    Ok(())
}

fn text_style(h: HPos) -> TextStyle<'static> {
    TextStyle::from(FONT.into_font()).pos(Pos::new(h, VPos::Center))
}

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_owned()
    } else {
        format!("{}…", s.chars().take(n - 1).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_escaped_and_the_chart_is_titled() {
        let svg = hint_dots(
            "Success <by> hint",
            &[("<script>alert(1)</script>".into(), [Some(0.4), Some(0.6), None])],
        );
        assert!(svg.starts_with(r#"<svg class="chart" role="img""#), "{svg}");
        assert!(svg.contains("<title>Success &lt;by&gt; hint</title>"));
        assert!(!svg.contains("<script"), "{svg}");
        assert!(svg.contains("&lt;script&gt;"), "{svg}");
        let map = heatmap("t", &["No hints"], &[("cogs".into(), vec![Some(0.5)])]);
        assert!(map.contains(">50%<"), "{map}");
        let bars = stacked_bars("t", &["wrong result"], &[("a".into(), vec![3])]);
        assert!(bars.contains(">3<"), "{bars}");
        let point =
            |label: &str, cost, success| CostPoint { label: label.into(), cost, success, interval: None };
        let cost = cost_success("t", &[point("<b>x</b>", 0.2, 0.4)]);
        assert!(cost.contains("&lt;b&gt;x&lt;/b&gt;") && !cost.contains("<b>"), "{cost}");
    }

    #[test]
    fn the_font_is_set_once_and_nothing_drawn_is_lost() {
        const LABEL: &str = ">a &quot; opacity=&quot;1&quot; fill=&quot;#000000&quot;&gt; b</text>";
        let svg =
            hint_dots("t", &[(r##"a " opacity="1" fill="#000000"> b"##.into(), [Some(0.5), None, None])]);
        assert!(
            svg.contains(r#"xmlns="http://www.w3.org/2000/svg" font-family="sans-serif" font-size="#),
            "{svg}"
        );
        assert_eq!(svg.matches("font-family").count(), 1, "{svg}");
        let tags: String = svg.split('<').map(|t| t.split('>').next().unwrap_or("")).collect();
        assert!(!tags.contains(r#"opacity="1""#) && !tags.contains("stroke-width=\"1\"/"), "{svg}");
        assert!(!svg.contains('\n'), "{svg}");
        // The label keeps its text, quotes and all, however much it looks like a tag's.
        assert!(svg.contains(LABEL), "{svg}");
        // The legend's and axis's text inherit; coloured text keeps its colour.
        assert!(svg.contains(r#"<text x="260" y="#) && svg.contains(">No hints<"), "{svg}");
        let map = heatmap("t", &["No hints"], &[("cogs".into(), vec![Some(0.9)])]);
        assert!(map.contains(" fill=\"#"), "{map}");
    }

    #[test]
    fn the_frontier_holds_the_agents_nothing_beats_on_both() {
        let point =
            |label: &str, cost, success| CostPoint { label: label.into(), cost, success, interval: None };
        let points = [
            point("cheap, weak", 0.1, 0.1),
            point("dear, strong", 2.0, 0.5),
            point("beaten", 1.0, 0.1),
            point("middle", 0.5, 0.3),
            point("tie of middle", 0.5, 0.3),
            point("beaten on success only", 0.5, 0.2),
        ];
        assert_eq!(frontier(&points), [0, 3, 4, 1]);
        assert_eq!(frontier(&[]), Vec::<usize>::new());
    }

    #[test]
    fn the_cost_axis_spans_whole_decades() {
        assert_eq!(decades([0.02, 5.21, 0.0].into_iter()), (0.01, 10.0));
        assert_eq!(decades([0.5].into_iter()), (0.1, 1.0));
        assert_eq!(decades(std::iter::empty()), (0.01, 1.0));
        let t = ticks(0.01, 10.0);
        assert_eq!(t.len(), 7, "{t:?}");
        assert_eq!(t.iter().map(|c| money(*c)).collect::<Vec<_>>()[..3], ["$0.01", "$0.05", "$0.1"]);
        assert_eq!(ticks(0.1, 10.0).len(), 7, "1, 2 and 5 over two decades");
        assert_eq!(money(10.0), "$10");
        assert_eq!(ticks(0.001, 100.0).len(), 6, "only decades over many");
    }
}
