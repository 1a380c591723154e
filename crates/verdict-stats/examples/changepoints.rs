//! Development filter for scripts/validate-history.py: reads one JSON
//! object per stdin line (`{"series": [...], "window": 50, "pvalue": 0.001,
//! "magnitude": 0.0}`) and writes one line per input with verdict's change
//! points and weak change points. Must not: be used by verdict itself or
//! by CI (the oracle comparison is a development tool).

use std::io::{BufRead, Write};

use verdict_stats::changepoint::{ChangePoint, Method, Settings, detect};

fn points(points: &[ChangePoint]) -> serde_json::Value {
    points
        .iter()
        .map(|point| {
            serde_json::json!({
                "index": point.index,
                "pvalue": point.test.p_value,
                "mean_before": point.test.mean_before,
                "mean_after": point.test.mean_after,
            })
        })
        .collect()
}

fn main() {
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    for (number, line) in stdin.lock().lines().enumerate() {
        let line = line.unwrap_or_else(|error| panic!("read stdin line {}: {error}", number + 1));
        let request: serde_json::Value = serde_json::from_str(&line)
            .unwrap_or_else(|error| panic!("parse stdin line {}: {error}", number + 1));
        let series: Vec<f64> = request["series"]
            .as_array()
            .expect("series array")
            .iter()
            .map(|value| value.as_f64().expect("number"))
            .collect();
        let settings = Settings {
            window: request["window"].as_u64().unwrap_or(50) as usize,
            max_p_value: request["pvalue"].as_f64().unwrap_or(0.001),
            min_magnitude: request["magnitude"].as_f64().unwrap_or(0.0),
            method: match request["method"].as_str() {
                Some("ranks") => Method::Ranks,
                _ => Method::Otava,
            },
        };
        let answer = match detect(&series, &settings) {
            Ok(detection) => serde_json::json!({
                "change_points": points(&detection.change_points),
                "weak_change_points": points(&detection.weak_change_points),
            }),
            Err(error) => serde_json::json!({ "error": error.to_string() }),
        };
        writeln!(stdout, "{answer}").expect("write stdout");
    }
}
