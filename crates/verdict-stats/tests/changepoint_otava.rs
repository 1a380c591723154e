//! Change point detection against Apache Otava: the reference cases of
//! Otava's own test suite, and series whose expected answers Otava 0.8.0
//! produced (tests/fixtures/otava-*.json, written by
//! scripts/validate-history.py --write-fixture). Must not: need Otava.

use verdict_stats::changepoint::{Method, Settings, describe, detect, detect_incremental, t_test};

const CSV_SERIES: [f64; 10] = [
    10.43, 10.23, 10.29, 10.91, 10.34, 10.69, 9.23, 9.11, 9.13, 9.03,
];

/// Otava's defaults with Otava's method (verdict's default is ranks).
fn otava_defaults() -> Settings {
    Settings::otava()
}

#[test]
fn step_of_ten_points_is_found_at_its_first_point() {
    let mut series = vec![1.0; 10];
    series.extend([0.5; 10]);
    let settings = Settings {
        window: 10,
        max_p_value: 0.0001,
        min_magnitude: 0.0,
        method: Method::Otava,
    };
    let detection = detect(&series, &settings).unwrap();
    let indices: Vec<usize> = detection.change_points.iter().map(|p| p.index).collect();
    assert_eq!(indices, [10]);
    assert_eq!(detection.change_points[0].test.p_value, 0.0);
}

#[test]
fn t_test_of_identical_segments_is_not_significant() {
    let segment = [1.00, 1.02, 1.05, 0.95, 0.98];
    let test = t_test(&segment, &segment);
    assert!((test.p_value - 1.0).abs() < 1e-12, "{test:?}");
}

#[test]
fn t_test_of_shifted_segments_is_significant_with_otavas_p_value() {
    let series = [1.00, 1.02, 1.05, 0.95, 0.98, 0.80, 0.82, 0.85, 0.79, 0.77];
    let test = t_test(&series[..5], &series[5..]);
    assert!(test.p_value < 0.001);
    // scipy.stats.ttest_ind_from_stats with np.std (population) inputs.
    assert!(
        (test.p_value - 8.867_907_052_957_251e-6).abs() < 1e-12,
        "{test:?}"
    );
    assert!((test.std_before - 0.034_058_772_731_852_83).abs() < 1e-15);
}

#[test]
fn csv_series_changes_between_sixth_and_seventh_point_by_minus_12_9_percent() {
    let detection = detect(&CSV_SERIES, &otava_defaults()).unwrap();
    assert_eq!(detection.change_points.len(), 1);
    let point = detection.change_points[0];
    assert_eq!(point.index, 6);
    assert!((point.test.forward_change() * 100.0 - -12.943_234_218_476_707).abs() < 1e-9);
    assert!((point.test.p_value - 4.985_262_183_171_655e-6).abs() < 1e-15);
    let described = describe(&CSV_SERIES, &detection.change_points, 0.95);
    assert_eq!(described[0].median_before, (10.34 + 10.43) / 2.0);
    assert!((described[0].median_after - 9.12).abs() < 1e-12);
}

fn check_fixture(text: &str, name: &str) {
    let cases: Vec<serde_json::Value> = serde_json::from_str(text).unwrap();
    assert!(cases.len() >= 10, "{name}: {} cases", cases.len());
    let mut with_points = 0;
    for (number, case) in cases.iter().enumerate() {
        let series: Vec<f64> = case["series"]
            .as_array()
            .unwrap()
            .iter()
            .map(|value| value.as_f64().unwrap())
            .collect();
        let settings = Settings {
            window: case["window"].as_u64().unwrap() as usize,
            max_p_value: case["pvalue"].as_f64().unwrap(),
            min_magnitude: case["magnitude"].as_f64().unwrap(),
            method: Method::Otava,
        };
        let detection = detect(&series, &settings).unwrap();
        let expected = case["change_points"].as_array().unwrap();
        let found: Vec<usize> = detection.change_points.iter().map(|p| p.index).collect();
        let wanted: Vec<usize> = expected
            .iter()
            .map(|p| p["index"].as_u64().unwrap() as usize)
            .collect();
        assert_eq!(found, wanted, "{name} case {number}: change points");
        for (point, expected) in detection.change_points.iter().zip(expected) {
            let p_value = expected["pvalue"].as_f64().unwrap();
            assert!(
                (point.test.p_value - p_value).abs() <= 1e-12 + 1e-6 * p_value,
                "{name} case {number} index {}: p {} vs otava {p_value}",
                point.index,
                point.test.p_value
            );
            let mean = expected["mean_before"].as_f64().unwrap();
            assert!((point.test.mean_before - mean).abs() <= 1e-9 * mean.abs());
        }
        let weak: Vec<usize> = detection
            .weak_change_points
            .iter()
            .map(|p| p.index)
            .collect();
        let wanted_weak: Vec<usize> = case["weak_change_points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|index| index.as_u64().unwrap() as usize)
            .collect();
        assert_eq!(
            weak, wanted_weak,
            "{name} case {number}: weak change points"
        );
        with_points += usize::from(!found.is_empty());
    }
    assert!(with_points >= 5, "{name}: too few cases with change points");
}

#[test]
fn default_settings_match_otava_outputs() {
    check_fixture(include_str!("fixtures/otava-default.json"), "otava-default");
}

#[test]
fn window_20_p_001_magnitude_5_percent_match_otava_outputs() {
    check_fixture(
        include_str!("fixtures/otava-window20.json"),
        "otava-window20",
    );
}

#[test]
fn appending_points_reexamines_only_the_tail_and_keeps_old_change_points() {
    // 2000 points, a 20% step at 500, a further 10% step at 1995 arriving
    // with the last appended points. Deterministic noise (golden ratio).
    let value = |index: usize| {
        let level = if index < 500 {
            100.0
        } else if index < 1995 {
            120.0
        } else {
            132.0
        };
        let noise = ((index as f64 * 0.618_033_988_7).fract() - 0.5) * 4.0;
        level + noise
    };
    let full: Vec<f64> = (0..2000).map(value).collect();
    let settings = otava_defaults();
    let before = detect(&full[..1990], &settings).unwrap();
    assert!(before.change_points.iter().any(|p| p.index == 500));
    let again = detect_incremental(&full, &settings, 10, &before.weak_change_points).unwrap();
    let whole = detect(&full, &settings).unwrap();
    assert_eq!(again.change_points, whole.change_points);
    assert!(again.change_points.iter().any(|p| p.index == 500));
    assert!(
        again.windows_examined * 5 < whole.windows_examined,
        "incremental examined {} windows, full {}",
        again.windows_examined,
        whole.windows_examined
    );
}
