//! The HTML page of `verdict explain`: per comparison the facts (main
//! metric's change, rows tested, discoveries, interval level), a
//! differential flame graph of the candidate's profiles as inline SVG
//! (widths from the candidate; colour from the tested change of each
//! symbol's inclusive share: warm for a significant increase, cool for a
//! significant decrease, grey otherwise; every frame's name, share and
//! change in its `<title>`; no script), and the ranked tables.
//! Must not: compute anything (every figure is the model's) or emit a
//! byte of a symbol name unescaped.

use std::fmt::Write as _;

use verdict_analysis::explain::{Change, ExplainComparison, ExplainReport, ExplainRow};
use verdict_analysis::flame::FlameNode;

use super::escape;
use super::page::{self, Cell, Page};
use super::svg::WIDTH;
use crate::explain::{ROW_COLUMNS, comparison_header, header, row_cells};

/// Height of one frame in the flame graph.
const FRAME_HEIGHT: f64 = 18.0;
/// Frames narrower than this (SVG units) carry no label.
const LABEL_WIDTH: f64 = 42.0;
/// Characters of a label per SVG unit of width (a rough glyph width).
const GLYPH_WIDTH: f64 = 7.0;

const FLAME_STYLE: &str = "<style>svg.flame rect { stroke: var(--bg); stroke-width: 0.5; } \
svg.flame .same { fill: #c9ced4; } svg.flame .increase { fill: #e8684a; } \
svg.flame .decrease { fill: #5b8def; } svg.flame text { font-size: 11px; fill: #1b1f24; pointer-events: none; }</style>\n";

/// The page.
pub fn render_explain(report: &ExplainReport) -> String {
    let mut page = Page::new(&format!("explain: {}", report.experiment));
    page.push(FLAME_STYLE);
    for line in header(report) {
        page.note(&line);
    }
    for (index, comparison) in report.comparisons.iter().enumerate() {
        section(&mut page, report, comparison, index);
    }
    if report.comparisons.is_empty() {
        page.note("The experiment has no comparisons to explain.");
    }
    page.finish()
}

fn section(page: &mut Page, report: &ExplainReport, comparison: &ExplainComparison, index: usize) {
    let lines = comparison_header(report, comparison);
    page.heading(&lines[0], &format!("comparison-{index}"));
    for line in &lines[1..] {
        page.note(line.trim());
    }
    if let Some(flame) = &comparison.flame {
        page.heading_at(3, "Differential flame graph", &format!("flame-{index}"));
        page.note(
            "Widths: the candidate's profiles (each profiled iteration weighs the same). Colour: the tested change of the frame's symbol's inclusive share, red for a significant increase, blue for a significant decrease, grey for no discovery at q.",
        );
        page.push(&flame_svg(
            flame,
            &format!("flame graph of {}", comparison.name),
        ));
        page.push(
            "<p class=\"legend\"><span><span class=\"swatch\" style=\"background:#e8684a\"></span>share increased</span><span><span class=\"swatch\" style=\"background:#5b8def\"></span>share decreased</span><span><span class=\"swatch\" style=\"background:#c9ced4\"></span>no discovery</span></p>\n",
        );
    }
    for (rows, symbols, title, id) in [
        (
            &comparison.symbols,
            true,
            "Symbols (share of the profile)",
            "symbols",
        ),
        (
            &comparison.monitors,
            false,
            "Monitors (per iteration)",
            "monitors",
        ),
    ] {
        page.heading_at(3, title, &format!("{id}-{index}"));
        if rows.is_empty() {
            page.note(if report.all {
                "No row tested."
            } else {
                "No row changed at q."
            });
            continue;
        }
        page.push(&rows_table(rows, symbols));
    }
}

fn rows_table(rows: &[ExplainRow], symbols: bool) -> String {
    let mut header: Vec<&str> = vec![if symbols { "symbol" } else { "monitor" }];
    if symbols {
        header.push("share");
    }
    header.extend(ROW_COLUMNS);
    let body: Vec<(Vec<Cell>, Option<&str>)> = rows
        .iter()
        .map(|row| {
            let cells = row_cells(row);
            let text_columns = if symbols { 2 } else { 1 };
            (
                cells
                    .into_iter()
                    .enumerate()
                    .map(|(column, cell)| {
                        if column < text_columns {
                            Cell::Text(cell)
                        } else {
                            Cell::Number(cell)
                        }
                    })
                    .collect(),
                None,
            )
        })
        .collect();
    page::table(&header, &body, "explain")
}

/// The deepest level of the tree (the root is 0).
fn depth(node: &FlameNode) -> usize {
    1 + node.children.iter().map(depth).max().unwrap_or(0)
}

/// The flame graph: the root at the bottom, callees above their callers.
pub fn flame_svg(root: &FlameNode, title: &str) -> String {
    let levels = depth(root);
    let height = levels as f64 * FRAME_HEIGHT + 4.0;
    let mut output = format!(
        "<svg class=\"plot flame\" viewBox=\"0 0 {WIDTH} {height}\" role=\"img\" xmlns=\"http://www.w3.org/2000/svg\"><title>{}</title>\n",
        escape::text(title)
    );
    let scale = if root.share > 0.0 {
        WIDTH / root.share
    } else {
        WIDTH
    };
    draw(&mut output, root, 0.0, 0, levels, scale);
    output.push_str("</svg>\n");
    output
}

fn draw(output: &mut String, node: &FlameNode, x: f64, level: usize, levels: usize, scale: f64) {
    let width = node.share * scale;
    let y = (levels - 1 - level) as f64 * FRAME_HEIGHT + 2.0;
    let class = match node.change {
        Change::Increase => "increase",
        Change::Decrease => "decrease",
        Change::None => "same",
    };
    let change = match (node.change, node.shift) {
        (Change::Increase, Some(shift)) | (Change::Decrease, Some(shift)) => {
            format!(", inclusive share changed ({shift:+.4} on its scale)")
        }
        _ => String::new(),
    };
    let _ = write!(
        output,
        "<g><title>{}: {:.2}% of the candidate's profile{}</title><rect class=\"{class}\" x=\"{x:.1}\" y=\"{y:.1}\" width=\"{width:.1}\" height=\"{:.1}\"/>",
        escape::text(&node.name),
        node.share * 100.0,
        escape::text(&change),
        FRAME_HEIGHT - 1.0
    );
    if width >= LABEL_WIDTH {
        let fits = ((width - 6.0) / GLYPH_WIDTH).max(0.0) as usize;
        let label: String = if node.name.chars().count() > fits {
            let kept: String = node.name.chars().take(fits.saturating_sub(2)).collect();
            format!("{kept}..")
        } else {
            node.name.clone()
        };
        let _ = write!(
            output,
            "<text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            x + 3.0,
            y + FRAME_HEIGHT - 5.0,
            escape::text(&label)
        );
    }
    output.push_str("</g>\n");
    let mut child_x = x;
    for child in &node.children {
        draw(output, child, child_x, level + 1, levels, scale);
        child_x += child.share * scale;
    }
}
