//! The TigerBeetle benchmark series (Nyrkiö's demonstration data, from
//! Apache Otava's test suite; tests/fixtures/tigerbeetle.json with its
//! licence): Otava's method gives Otava's own expected change points, and
//! verdict's rank method at its defaults the steps a reader sees (down at
//! 15, up at 61 and 71, down at 95; then points along the slow climb), not
//! the single anomalous run at 10.

use verdict_stats::changepoint::{Method, Settings, detect};

fn fixture() -> serde_json::Value {
    serde_json::from_str(include_str!("fixtures/tigerbeetle.json")).unwrap()
}

fn series() -> Vec<f64> {
    fixture()["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|value| value.as_f64().unwrap())
        .collect()
}

fn indices(settings: &Settings) -> Vec<usize> {
    detect(&series(), settings)
        .unwrap()
        .change_points
        .iter()
        .map(|point| point.index)
        .collect()
}

#[test]
fn otava_gives_otavas_expected_change_points() {
    for case in fixture()["otava_expected"].as_array().unwrap() {
        let settings = Settings {
            window: case["window"].as_u64().unwrap() as usize,
            max_p_value: case["pvalue"].as_f64().unwrap(),
            min_magnitude: case["magnitude"].as_f64().unwrap(),
            method: Method::Otava,
        };
        let want: Vec<usize> = case["change_points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|index| index.as_u64().unwrap() as usize)
            .collect();
        assert_eq!(indices(&settings), want, "{case}");
    }
}

#[test]
fn ranks_give_the_visible_changes_and_not_the_single_bad_run() {
    let found = indices(&Settings::default());
    println!("ranks at the defaults: {found:?}");

    for visible in [15, 61, 71, 95] {
        assert!(
            found.iter().any(|index| index.abs_diff(visible) <= 1),
            "{visible} in {found:?}"
        );
    }
    assert!(!found.contains(&10) && !found.contains(&11), "{found:?}");
}
