//! Prints the change point section of docs/validation-history.md:
//! `cargo run --release -p verdict-lab --bin changepoint_validation
//! -- [TRIALS] [SEED]` (defaults 2000, 1): false change points on
//! no-change series with heavy tails, steps found, and precision and
//! recall on series with several steps, for the rank method and Otava's;
//! then both methods on the TigerBeetle reference series (the committed
//! fixture crates/verdict-stats/tests/fixtures/tigerbeetle.json).
//! Must not: write files (scripts/validate.sh redirects its output).

use verdict_stats::changepoint::{Method, Settings, detect};

/// The TigerBeetle series with Otava's expected change points, both
/// methods side by side, as a markdown table.
fn tigerbeetle() -> String {
    let fixture: serde_json::Value = serde_json::from_str(include_str!(
        "../../../verdict-stats/tests/fixtures/tigerbeetle.json"
    ))
    .expect("tigerbeetle.json is JSON");
    let series: Vec<f64> = fixture["series"]
        .as_array()
        .expect("series array")
        .iter()
        .map(|value| value.as_f64().expect("number"))
        .collect();
    let indices = |settings: &Settings| -> String {
        let found: Vec<String> = detect(&series, settings)
            .expect("valid series")
            .change_points
            .iter()
            .map(|point| point.index.to_string())
            .collect();
        found.join(", ")
    };
    let mut out = format!(
        "\n### The TigerBeetle reference series\n\n\
         {} points of TigerBeetle's benchmark (Nyrkiö's demonstration data, from Apache \
         Otava's test suite, Apache-2.0; crates/verdict-stats/tests/fixtures/tigerbeetle.json, \
         checked by tests/changepoint_tigerbeetle.rs). The series drops once at index 10 (one \
         anomalous run), steps down at 15, up at 61 and 71, down at 95, then climbs slowly.\n\n\
         | settings | Otava's expected points | otava | ranks (same p; `--window` does not apply) |\n\
         |---|---|---|---|\n",
        series.len()
    );
    for case in fixture["otava_expected"].as_array().expect("cases") {
        let window = case["window"].as_u64().expect("window") as usize;
        let pvalue = case["pvalue"].as_f64().expect("pvalue");
        let magnitude = case["magnitude"].as_f64().expect("magnitude");
        let expected: Vec<String> = case["change_points"]
            .as_array()
            .expect("change_points")
            .iter()
            .map(|index| index.to_string())
            .collect();
        let settings = |method| Settings {
            window,
            max_p_value: pvalue,
            min_magnitude: magnitude,
            method,
        };
        out.push_str(&format!(
            "| window {window}, p {pvalue}, magnitude {magnitude} | {} | {} | {} |\n",
            expected.join(", "),
            indices(&settings(Method::Otava)),
            indices(&settings(Method::Ranks))
        ));
    }
    out.push_str(&format!(
        "| defaults (ranks p 0.05; otava window 50, p 0.001) | - | {} | {} |\n",
        indices(&Settings::otava()),
        indices(&Settings::default())
    ));
    out
}

fn main() -> std::process::ExitCode {
    verdict_lab::run_report("changepoint_validation", 2000, |trials, seed, _| {
        let report = verdict_lab::changepoints::changepoints_report(trials, seed);
        Ok(report + &tigerbeetle())
    })
}
