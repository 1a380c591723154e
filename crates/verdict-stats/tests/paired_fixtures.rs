//! The paired-blocks analysis on real sequences recorded on the shared
//! development VM (scripts/record-paired-fixture.py): 300 interleaved
//! blocks of the same stress-ng workload as arm A and arm B (A/A), once
//! with only the other engineers' builds as load (`paired-shared.csv`) and
//! once with a background `stress-ng --cpu 2` switched on and off at random
//! blocks (`paired-load-steps.csv`). Proves on real noise what the
//! simulation shows on models: no more false alarms than α, and far fewer
//! runs than two independent samples for 90% power at a 10% slowdown
//! (injected by scaling arm B).

use verdict_stats::paired::compare_paired;
use verdict_stats::verdict::{Better, CompareSettings, Verdict, compare};

/// (A, B) run times per block, in block order.
fn blocks(name: &str) -> (Vec<f64>, Vec<f64>) {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let mut a = Vec::new();
    let mut b = Vec::new();
    for (number, line) in text.lines().enumerate().skip(1) {
        let fields: Vec<&str> = line.split(',').collect();
        assert_eq!(fields.len(), 4, "{path}:{}: {line}", number + 1);
        let block: usize = fields[0].parse().unwrap();
        let seconds: f64 = fields[3].parse().unwrap();
        let arm = if fields[1] == "A" { &mut a } else { &mut b };
        assert_eq!(arm.len(), block, "{path}:{}: blocks in order", number + 1);
        arm.push(seconds);
    }
    assert_eq!(a.len(), b.len());
    (a, b)
}

fn verdict_of(paired: bool, a: &[f64], b: &[f64]) -> Verdict {
    let settings = CompareSettings::new(Better::Lower);
    let comparison = if paired {
        compare_paired(a, b, &settings)
    } else {
        compare(a, b, &settings)
    };
    comparison.unwrap().verdict
}

/// Share of the sliding windows of `blocks` consecutive blocks (starting
/// every third block) in which B, slowed down by `change`, is called a
/// regression.
fn power(paired: bool, a: &[f64], b: &[f64], blocks: usize, change: f64) -> f64 {
    let slowed: Vec<f64> = b.iter().map(|value| value * (1.0 + change)).collect();
    let starts: Vec<usize> = (0..=a.len() - blocks).step_by(3).collect();
    let found = starts
        .iter()
        .filter(|&&start| {
            let range = start..start + blocks;
            verdict_of(paired, &a[range.clone()], &slowed[range]) == Verdict::Regression
        })
        .count();
    found as f64 / starts.len() as f64
}

/// The fewest blocks (runs per arm) with power ≥ 0.9 on the grid 6, 7, …,
/// 20, then steps of about 10% up to 150.
fn runs_for_power(paired: bool, a: &[f64], b: &[f64]) -> Option<usize> {
    let mut grid: Vec<usize> = (6..=20).collect();
    while let Some(&last) = grid.last().filter(|&&last| last < 150) {
        grid.push((last + last.div_ceil(10)).min(150));
    }
    grid.into_iter()
        .find(|&blocks| power(paired, a, b, blocks, 0.10) >= 0.9)
}

#[test]
fn real_sequences_raise_no_more_false_alarms_than_alpha() {
    // Ten disjoint windows of 30 blocks per file: 20 A/A comparisons. At
    // α = 0.05 one is expected; four or more has probability 1.6%.
    let mut alarms = [0usize; 2];
    for name in ["paired-shared.csv", "paired-load-steps.csv"] {
        let (a, b) = blocks(name);
        for window in 0..10 {
            let range = window * 30..(window + 1) * 30;
            for (index, paired) in [false, true].into_iter().enumerate() {
                let verdict = verdict_of(paired, &a[range.clone()], &b[range.clone()]);
                if matches!(verdict, Verdict::Regression | Verdict::Improvement) {
                    alarms[index] += 1;
                }
            }
        }
    }
    eprintln!(
        "A/A false alarms in 20 windows: independent {}, paired {}",
        alarms[0], alarms[1]
    );
    assert!(alarms[1] <= 3, "paired: {} of 20", alarms[1]);
    assert!(alarms[0] <= 3, "independent: {} of 20", alarms[0]);
}

#[test]
fn real_sequences_need_far_fewer_paired_runs() {
    for name in ["paired-shared.csv", "paired-load-steps.csv"] {
        let (a, b) = blocks(name);
        let independent = runs_for_power(false, &a, &b);
        let paired = runs_for_power(true, &a, &b).expect("paired reaches 90% power");
        eprintln!(
            "{name}: runs per arm for 90% power at +10%: independent {independent:?}, paired {paired}"
        );
        // Beyond 150 blocks counts as 151 for the ratio.
        let independent = independent.unwrap_or(151);
        assert!(
            paired as f64 <= 0.6 * independent as f64,
            "{name}: paired {paired} vs independent {independent}"
        );
    }
}
