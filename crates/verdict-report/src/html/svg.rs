//! Hand-written inline SVG for the HTML report: the forest plot of deltas,
//! the per-cell distribution strips and the run-order plots. Every picture
//! is a self-contained `<svg>` element styled by the page's CSS classes (so
//! light, dark and print follow the page) with a `<title>` for screen
//! readers, and every colour has a word beside it.
//! Must not: read files, fetch anything, use randomness other than the
//! deterministic jitter below, or emit unescaped user text.

use super::escape;
use super::page::VerdictClass;
use crate::format;
use std::fmt::Write as _;

/// Width of every picture in SVG user units (scaled to the page width).
pub const WIDTH: f64 = 1200.0;
/// Above this many values in one cell, strips and run-order plots draw a
/// deterministic subsample plus every point outside the Tukey fences.
pub const SUBSAMPLE_LIMIT: usize = 1000;
/// Points at which a moving median is evaluated, at most.
const MEDIAN_POINTS: usize = 400;

/// A linear map from data to picture coordinates.
#[derive(Debug, Clone, Copy)]
pub struct Scale {
    pub low: f64,
    pub high: f64,
    pub from: f64,
    pub to: f64,
}

impl Scale {
    pub fn at(&self, value: f64) -> f64 {
        if self.high == self.low {
            return (self.from + self.to) / 2.0;
        }
        self.from + (value - self.low) / (self.high - self.low) * (self.to - self.from)
    }
}

/// About `count` round tick values covering `[low, high]` (1, 2, 5 steps).
pub fn ticks(low: f64, high: f64, count: usize) -> Vec<f64> {
    if !(low.is_finite() && high.is_finite()) || high <= low {
        return vec![low];
    }
    let raw = (high - low) / count.max(1) as f64;
    let power = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|factor| factor * power)
        .find(|step| *step >= raw)
        .unwrap_or(10.0 * power);
    let first = (low / step).ceil() as i64;
    let last = (high / step).floor() as i64;
    (first..=last).map(|index| index as f64 * step).collect()
}

/// `[low, high]` widened by `fraction` of its span on both sides (a point
/// range gets a small span around it).
pub fn padded(low: f64, high: f64, fraction: f64) -> (f64, f64) {
    let span = high - low;
    if span > 0.0 {
        (low - span * fraction, high + span * fraction)
    } else {
        let half = if low == 0.0 { 1.0 } else { low.abs() * 0.05 };
        (low - half, high + half)
    }
}

/// A coordinate with one decimal, no trailing `.0`.
fn number(value: f64) -> String {
    let rounded = (value * 10.0).round() / 10.0;
    if rounded == rounded.trunc() {
        format!("{}", rounded as i64)
    } else {
        format!("{rounded:.1}")
    }
}

/// Deterministic jitter in [0, 1) from a sequence number (SplitMix64's
/// finaliser, Steele et al. 2014), so a page renders identically twice.
pub fn jitter(sequence: u32) -> f64 {
    let mut state = u64::from(sequence).wrapping_add(0x9e37_79b9_7f4a_7c15);
    state = (state ^ (state >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    state = (state ^ (state >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    state ^= state >> 31;
    (state >> 11) as f64 / (1u64 << 53) as f64
}

/// Quantile of sorted values, linear interpolation between order
/// statistics (Hyndman & Fan 1996, type 7).
pub fn quantile(sorted: &[f64], probability: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let position = probability * (sorted.len() - 1) as f64;
    let lower = position.floor() as usize;
    let upper = position.ceil() as usize;
    let weight = position - lower as f64;
    sorted[lower] * (1.0 - weight) + sorted[upper] * weight
}

/// Quartiles and Tukey fences (1.5 IQR) of one cell's values.
#[derive(Debug, Clone, Copy)]
pub struct BoxStats {
    pub first: f64,
    pub median: f64,
    pub third: f64,
    /// Most extreme values inside the fences (the whiskers).
    pub whisker_low: f64,
    pub whisker_high: f64,
    pub fence_low: f64,
    pub fence_high: f64,
}

impl BoxStats {
    pub fn of(sorted: &[f64]) -> Option<BoxStats> {
        if sorted.is_empty() {
            return None;
        }
        let first = quantile(sorted, 0.25);
        let third = quantile(sorted, 0.75);
        let spread = third - first;
        let fence_low = first - 1.5 * spread;
        let fence_high = third + 1.5 * spread;
        let inside = sorted
            .iter()
            .filter(|value| **value >= fence_low && **value <= fence_high);
        Some(BoxStats {
            first,
            median: quantile(sorted, 0.5),
            third,
            whisker_low: inside.clone().copied().fold(f64::INFINITY, f64::min),
            whisker_high: inside.copied().fold(f64::NEG_INFINITY, f64::max),
            fence_low,
            fence_high,
        })
    }

    pub fn outside(&self, value: f64) -> bool {
        value < self.fence_low || value > self.fence_high
    }
}

/// One row of the forest plot.
#[derive(Debug, Clone)]
pub struct ForestRow {
    pub label: String,
    /// Relative change, candidate/baseline - 1.
    pub delta: f64,
    pub low: Option<f64>,
    pub high: Option<f64>,
    /// Practical threshold (fraction); the band is [-threshold, +threshold].
    pub threshold: f64,
    /// The verdict's words, in the row's title.
    pub verdict: String,
    /// The row's colour.
    pub class: VerdictClass,
    /// Where an adaptive comparison stopped, when it did.
    pub note: Option<String>,
}

fn open_svg(output: &mut String, height: f64, class: &str, title: &str) {
    let _ = write!(
        output,
        "<svg class=\"plot {class}\" viewBox=\"0 0 {} {}\" role=\"img\" xmlns=\"http://www.w3.org/2000/svg\"><title>{}</title>",
        number(WIDTH),
        number(height),
        escape::text(title)
    );
}

/// Label cut to `limit` characters with an ellipsis (the full text is in
/// the element's `<title>`).
fn shortened(label: &str, limit: usize) -> String {
    if label.chars().count() <= limit {
        label.to_string()
    } else {
        let mut cut: String = label.chars().take(limit.saturating_sub(1)).collect();
        cut.push('\u{2026}');
        cut
    }
}

fn x_axis(output: &mut String, scale: &Scale, top: f64, bottom: f64, labels: &[(f64, String)]) {
    for (value, label) in labels {
        let x = number(scale.at(*value));
        let _ = write!(
            output,
            "<line class=\"grid\" x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\"/><text class=\"tick\" x=\"{x}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            number(top),
            number(bottom),
            number(bottom + 16.0),
            escape::text(label)
        );
    }
}

/// The axis title of the comparisons' forest plot.
pub const FOREST_AXIS: &str = "delta = candidate/baseline - 1 (Hodges-Lehmann) with its interval; shaded: within the threshold";

/// The forest plot: one row per comparison with the Hodges-Lehmann delta,
/// its interval, the threshold band and the verdict as colour and word;
/// `axis` says what the axis is.
pub fn forest_with_axis(rows: &[ForestRow], title: &str, axis: &str) -> String {
    let left = 360.0;
    let right = WIDTH - 190.0;
    let row_height = 30.0;
    let top = 28.0;
    let height = top + row_height * rows.len() as f64 + 34.0;
    let mut low = 0.0f64;
    let mut high = 0.0f64;
    for row in rows {
        for value in [Some(row.delta), row.low, row.high].into_iter().flatten() {
            if value.is_finite() {
                low = low.min(value);
                high = high.max(value);
            }
        }
        low = low.min(-row.threshold * 1.5);
        high = high.max(row.threshold * 1.5);
    }
    let (low, high) = padded(low, high, 0.05);
    let scale = Scale {
        low,
        high,
        from: left,
        to: right,
    };
    let bottom = top + row_height * rows.len() as f64;
    let mut output = String::new();
    open_svg(&mut output, height, "forest", title);
    let _ = write!(
        output,
        "<text class=\"axis-title\" x=\"{}\" y=\"16\" text-anchor=\"middle\">{}</text>",
        number((left + right) / 2.0),
        escape::text(axis)
    );
    let labels: Vec<(f64, String)> = ticks(low, high, 8)
        .into_iter()
        .map(|tick| {
            let label = if tick.abs() < 1e-12 {
                "0%".to_string()
            } else {
                format::percent(tick).replace(".0%", "%")
            };
            (tick, label)
        })
        .collect();
    x_axis(&mut output, &scale, top, bottom, &labels);
    for (index, row) in rows.iter().enumerate() {
        let y = top + row_height * index as f64;
        let middle = y + row_height / 2.0;
        let class = row.class.css();
        let band_low = scale.at(-row.threshold);
        let band_high = scale.at(row.threshold);
        let _ = write!(
            output,
            "<g class=\"row {class}\"><title>{}: {} {}</title><rect class=\"band\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>",
            escape::text(&row.label),
            escape::text(&format::percent(row.delta)),
            escape::text(&row.verdict),
            number(band_low),
            number(y + 2.0),
            number(band_high - band_low),
            number(row_height - 4.0)
        );
        let _ = write!(
            output,
            "<text class=\"label\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            number(left - 10.0),
            number(middle + 4.0),
            escape::text(&shortened(&row.label, 48))
        );
        if let (Some(interval_low), Some(interval_high)) = (row.low, row.high) {
            let _ = write!(
                output,
                "<line class=\"interval\" x1=\"{}\" y1=\"{m}\" x2=\"{}\" y2=\"{m}\"/><line class=\"interval\" x1=\"{a}\" y1=\"{}\" x2=\"{a}\" y2=\"{}\"/><line class=\"interval\" x1=\"{b}\" y1=\"{}\" x2=\"{b}\" y2=\"{}\"/>",
                number(scale.at(interval_low)),
                number(scale.at(interval_high)),
                number(middle - 5.0),
                number(middle + 5.0),
                number(middle - 5.0),
                number(middle + 5.0),
                m = number(middle),
                a = number(scale.at(interval_low)),
                b = number(scale.at(interval_high)),
            );
        }
        let _ = write!(
            output,
            "<rect class=\"estimate\" x=\"{}\" y=\"{}\" width=\"10\" height=\"10\"/>",
            number(scale.at(row.delta) - 5.0),
            number(middle - 5.0)
        );
        let word = match &row.note {
            Some(note) => format!("{} ({note})", row.verdict),
            None => row.verdict.clone(),
        };
        let _ = write!(
            output,
            "<text class=\"verdict-word\" x=\"{}\" y=\"{}\">{}</text></g>",
            number(right + 12.0),
            number(middle + 4.0),
            escape::text(&shortened(&word, 26))
        );
    }
    let zero = number(scale.at(0.0));
    let _ = write!(
        output,
        "<line class=\"zero\" x1=\"{zero}\" y1=\"{}\" x2=\"{zero}\" y2=\"{}\"/></svg>",
        number(top),
        number(bottom)
    );
    output
}

/// [`forest_with_axis`] for comparisons (the delta axis).
pub fn forest(rows: &[ForestRow], title: &str) -> String {
    forest_with_axis(rows, title, FOREST_AXIS)
}

/// One cell's values for the distribution strips and run-order plots.
#[derive(Debug, Clone)]
pub struct CellPoints<'a> {
    pub label: &'a str,
    /// `(sequence, value)` of the data iterations, in run order.
    pub values: Vec<(u32, f64)>,
    /// Sequence numbers of the failed (measured, not warmup) iterations.
    pub failed: Vec<u32>,
}

/// Which points of a cell to draw: all up to [`SUBSAMPLE_LIMIT`]; above it,
/// the values at `SUBSAMPLE_LIMIT` evenly spaced ranks (the sorted order's
/// quantiles, so the shape is kept) plus every value outside the fences.
/// Returns indices into `values` and whether it subsampled.
pub fn strip_selection(values: &[(u32, f64)], stats: Option<&BoxStats>) -> (Vec<usize>, bool) {
    if values.len() <= SUBSAMPLE_LIMIT {
        return ((0..values.len()).collect(), false);
    }
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|a, b| values[*a].1.total_cmp(&values[*b].1));
    let mut chosen = vec![false; values.len()];
    let last = order.len() - 1;
    for step in 0..SUBSAMPLE_LIMIT {
        chosen[order[step * last / (SUBSAMPLE_LIMIT - 1)]] = true;
    }
    if let Some(stats) = stats {
        for (index, (_, value)) in values.iter().enumerate() {
            if stats.outside(*value) {
                chosen[index] = true;
            }
        }
    }
    (
        (0..values.len()).filter(|index| chosen[*index]).collect(),
        true,
    )
}

/// Which points of a run-order plot to draw: all up to
/// [`SUBSAMPLE_LIMIT`]; above it every k-th iteration in run order
/// (k = ceil(n / limit)) plus every value outside the fences.
pub fn order_selection(values: &[(u32, f64)], stats: Option<&BoxStats>) -> (Vec<usize>, bool) {
    if values.len() <= SUBSAMPLE_LIMIT {
        return ((0..values.len()).collect(), false);
    }
    let stride = values.len().div_ceil(SUBSAMPLE_LIMIT);
    (
        (0..values.len())
            .filter(|index| {
                index % stride == 0 || stats.is_some_and(|stats| stats.outside(values[*index].1))
            })
            .collect(),
        true,
    )
}

fn sorted_values(values: &[(u32, f64)]) -> Vec<f64> {
    let mut sorted: Vec<f64> = values.iter().map(|(_, value)| *value).collect();
    sorted.sort_by(f64::total_cmp);
    sorted
}

/// Distributions of every cell on one common axis: each sample as a dot
/// jittered vertically (deterministically, by its sequence number) over a
/// box of quartiles with Tukey whiskers; failed iterations counted apart at
/// the right. Returns the SVG and whether any cell was subsampled.
pub fn distributions(cells: &[CellPoints<'_>], unit: &str, title: &str) -> (String, bool) {
    let left = 20.0;
    let right = WIDTH - 150.0;
    let row_height = 62.0;
    let top = 10.0;
    let bottom = top + row_height * cells.len() as f64;
    let height = bottom + 30.0;
    let (low, high) = value_domain(cells);
    let scale = Scale {
        low,
        high,
        from: left,
        to: right,
    };
    let mut output = String::new();
    let mut any_subsampled = false;
    open_svg(&mut output, height, "distribution", title);
    let labels: Vec<(f64, String)> = ticks(low, high, 8)
        .into_iter()
        .map(|tick| (tick, format::value(tick, unit)))
        .collect();
    x_axis(&mut output, &scale, top, bottom, &labels);
    for (index, cell) in cells.iter().enumerate() {
        let y = top + row_height * index as f64;
        let band_top = y + 20.0;
        let band_height = row_height - 26.0;
        let middle = band_top + band_height / 2.0;
        let sorted = sorted_values(&cell.values);
        let stats = BoxStats::of(&sorted);
        let _ = write!(
            output,
            "<g class=\"cell\"><text class=\"label\" x=\"{}\" y=\"{}\">{} (n={})</text>",
            number(left),
            number(y + 14.0),
            escape::text(cell.label),
            cell.values.len()
        );
        if let Some(stats) = &stats {
            let _ = write!(
                output,
                "<line class=\"whisker\" x1=\"{}\" y1=\"{m}\" x2=\"{}\" y2=\"{m}\"/><rect class=\"box\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/><line class=\"median\" x1=\"{md}\" y1=\"{}\" x2=\"{md}\" y2=\"{}\"/>",
                number(scale.at(stats.whisker_low)),
                number(scale.at(stats.whisker_high)),
                number(scale.at(stats.first)),
                number(band_top),
                number((scale.at(stats.third) - scale.at(stats.first)).max(1.0)),
                number(band_height),
                number(band_top - 3.0),
                number(band_top + band_height + 3.0),
                m = number(middle),
                md = number(scale.at(stats.median)),
            );
        }
        let (chosen, subsampled) = strip_selection(&cell.values, stats.as_ref());
        any_subsampled |= subsampled;
        for index in chosen {
            let (sequence, value) = cell.values[index];
            let outlier = stats.as_ref().is_some_and(|stats| stats.outside(value));
            let _ = write!(
                output,
                "<circle class=\"{}\" cx=\"{}\" cy=\"{}\" r=\"2.5\"/>",
                if outlier { "dot outlier" } else { "dot" },
                number(scale.at(value)),
                number(band_top + 3.0 + jitter(sequence) * (band_height - 6.0))
            );
        }
        if !cell.failed.is_empty() {
            let _ = write!(
                output,
                "<text class=\"failed-mark\" x=\"{}\" y=\"{}\">\u{2715} {} failed</text>",
                number(right + 14.0),
                number(middle + 4.0),
                cell.failed.len()
            );
        }
        if subsampled {
            let _ = write!(
                output,
                "<text class=\"note\" x=\"{}\" y=\"{}\" text-anchor=\"end\">subsample shown</text>",
                number(right),
                number(y + 14.0)
            );
        }
        output.push_str("</g>");
    }
    output.push_str("</svg>");
    (output, any_subsampled)
}

/// Smallest and largest value over every cell, padded.
pub fn value_domain(cells: &[CellPoints<'_>]) -> (f64, f64) {
    let mut low = f64::INFINITY;
    let mut high = f64::NEG_INFINITY;
    for (_, value) in cells.iter().flat_map(|cell| cell.values.iter()) {
        if value.is_finite() {
            low = low.min(*value);
            high = high.max(*value);
        }
    }
    if !low.is_finite() {
        return (0.0, 1.0);
    }
    padded(low, high, 0.04)
}

/// Moving median of `values` over a centred window of `window` values
/// (shrinking at the ends), evaluated at up to [`MEDIAN_POINTS`] evenly
/// spaced positions: `(position, median)`.
pub fn moving_median(values: &[f64], window: usize) -> Vec<(usize, f64)> {
    if values.is_empty() {
        return Vec::new();
    }
    let half = window / 2;
    let count = values.len().min(MEDIAN_POINTS);
    let mut scratch = Vec::with_capacity(window + 1);
    (0..count)
        .map(|step| {
            let position = if count == 1 {
                0
            } else {
                step * (values.len() - 1) / (count - 1)
            };
            let start = position.saturating_sub(half);
            let end = (position + half + 1).min(values.len());
            scratch.clear();
            scratch.extend_from_slice(&values[start..end]);
            scratch.sort_by(f64::total_cmp);
            (position, quantile(&scratch, 0.5))
        })
        .collect()
}

/// Window of the run-order plot's moving median: n/10 iterations, odd, at
/// least 5 and at most 1001.
pub fn median_window(count: usize) -> usize {
    ((count / 10) | 1).clamp(5, 1001)
}

/// Value against run order for one cell on the common axes `domain`
/// (values) and `sequences` (first and last sequence number of the run),
/// with a moving median; failed iterations as crosses in a lane below.
pub fn run_order(
    cell: &CellPoints<'_>,
    domain: (f64, f64),
    sequences: (u32, u32),
    unit: &str,
    drift: Option<f64>,
) -> (String, bool) {
    let width = WIDTH;
    let left = 90.0;
    let right = width - 20.0;
    let top = 26.0;
    let bottom = 196.0;
    let lane = bottom + 14.0;
    let height = lane + 32.0;
    let x_scale = Scale {
        low: f64::from(sequences.0),
        high: f64::from(sequences.1.max(sequences.0 + 1)),
        from: left,
        to: right,
    };
    let y_scale = Scale {
        low: domain.0,
        high: domain.1,
        from: bottom,
        to: top,
    };
    let mut output = String::new();
    let title = format!("{}: value against run order", cell.label);
    open_svg(&mut output, height, "run-order", &title);
    let _ = write!(
        output,
        "<text class=\"label\" x=\"{}\" y=\"16\">{} (n={}){}</text>",
        number(left),
        escape::text(cell.label),
        cell.values.len(),
        match drift {
            Some(rho) => escape::text(&format!("  drift: Spearman rho {rho:+.2} with run order")),
            None => String::new(),
        }
    );
    for tick in ticks(domain.0, domain.1, 4) {
        let y = number(y_scale.at(tick));
        let _ = write!(
            output,
            "<line class=\"grid\" x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\"/><text class=\"tick\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            number(left),
            number(right),
            number(left - 6.0),
            number(y_scale.at(tick) + 4.0),
            escape::text(&format::value(tick, unit))
        );
    }
    for tick in ticks(x_scale.low, x_scale.high, 10) {
        let x = number(x_scale.at(tick));
        let _ = write!(
            output,
            "<text class=\"tick\" x=\"{x}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            number(height - 4.0),
            tick as i64
        );
    }
    let _ = write!(
        output,
        "<rect class=\"frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/><text class=\"tick\" x=\"{}\" y=\"{}\" text-anchor=\"end\">failed</text><text class=\"tick\" x=\"{}\" y=\"16\" text-anchor=\"end\">x: iteration in run order</text>",
        number(left),
        number(top),
        number(right - left),
        number(bottom - top),
        number(left - 6.0),
        number(lane + 4.0),
        number(right)
    );
    let sorted = sorted_values(&cell.values);
    let stats = BoxStats::of(&sorted);
    let (chosen, subsampled) = order_selection(&cell.values, stats.as_ref());
    for index in chosen {
        let (sequence, value) = cell.values[index];
        let outlier = stats.as_ref().is_some_and(|stats| stats.outside(value));
        let _ = write!(
            output,
            "<circle class=\"{}\" cx=\"{}\" cy=\"{}\" r=\"2.5\"/>",
            if outlier { "dot outlier" } else { "dot" },
            number(x_scale.at(f64::from(sequence))),
            number(y_scale.at(value))
        );
    }
    let plain: Vec<f64> = cell.values.iter().map(|(_, value)| *value).collect();
    let medians = moving_median(&plain, median_window(plain.len()));
    if medians.len() > 1 {
        let points: Vec<String> = medians
            .iter()
            .map(|(position, median)| {
                format!(
                    "{},{}",
                    number(x_scale.at(f64::from(cell.values[*position].0))),
                    number(y_scale.at(*median))
                )
            })
            .collect();
        let _ = write!(
            output,
            "<polyline class=\"moving-median\" points=\"{}\"/>",
            points.join(" ")
        );
    }
    for sequence in &cell.failed {
        let x = x_scale.at(f64::from(*sequence));
        let _ = write!(
            output,
            "<path class=\"failed\" d=\"M{} {}l8 8m0 -8l-8 8\"/>",
            number(x - 4.0),
            number(lane - 4.0)
        );
    }
    output.push_str("</svg>");
    (output, subsampled)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round() {
        assert_eq!(ticks(0.0, 10.0, 5), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(ticks(-0.07, 0.07, 4), vec![-0.05, 0.0, 0.05]);
    }

    #[test]
    fn jitter_is_deterministic_and_spread() {
        assert_eq!(jitter(7), jitter(7));
        let values: Vec<f64> = (0..1000).map(jitter).collect();
        assert!(values.iter().all(|value| (0.0..1.0).contains(value)));
        let mean = values.iter().sum::<f64>() / 1000.0;
        assert!((mean - 0.5).abs() < 0.05, "mean {mean}");
    }

    #[test]
    fn quartiles_and_fences() {
        let sorted = [1.0, 2.0, 3.0, 4.0, 5.0, 100.0];
        let stats = BoxStats::of(&sorted).unwrap();
        assert_eq!(stats.median, 3.5);
        assert_eq!(stats.first, 2.25);
        assert_eq!(stats.third, 4.75);
        assert!(stats.outside(100.0));
        assert_eq!(stats.whisker_high, 5.0);
    }

    #[test]
    fn subsample_keeps_extremes_and_outliers() {
        let mut values: Vec<(u32, f64)> = (0..5000)
            .map(|index| (index, f64::from(index % 100)))
            .collect();
        values.push((5000, 10_000.0));
        let sorted = sorted_values(&values);
        let stats = BoxStats::of(&sorted).unwrap();
        let (chosen, subsampled) = strip_selection(&values, Some(&stats));
        assert!(subsampled);
        assert!(chosen.len() <= SUBSAMPLE_LIMIT + 1);
        assert!(chosen.contains(&5000), "the outlier is always drawn");
        let (order, _) = order_selection(&values, Some(&stats));
        assert!(order.contains(&5000) && order.contains(&0));
    }

    #[test]
    fn moving_median_follows_a_step() {
        let values: Vec<f64> = (0..100)
            .map(|index| if index < 50 { 1.0 } else { 2.0 })
            .collect();
        let medians = moving_median(&values, 9);
        assert_eq!(medians.first(), Some(&(0, 1.0)));
        assert_eq!(medians.last(), Some(&(99, 2.0)));
    }
}
