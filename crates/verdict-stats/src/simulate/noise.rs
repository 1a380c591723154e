//! Noise shapes for the Monte-Carlo validation: draws one benchmark value
//! given the true relative change and the execution slot it ran in.
//!
//! What it does: multiplicative noise around 1 (so a true change d scales
//! every value by 1 + d and the true relative shift of the Hodges–Lehmann
//! estimator is exactly d, except where rounding to integers blurs it).
//! Must not: use any randomness but the generator passed in.
//!
//! Normal variates by the Box–Muller transform (Box & Muller 1958, Ann.
//! Math. Statist. 29:610); Student-t by Z / sqrt(χ²₃/3) with χ²₃ a sum of
//! three squared normals. O(1) per value.

use rand::Rng;
use serde::Serialize;

use crate::plan::log_sd_from_cv;

/// A noise shape of the validation matrix (docs/validation.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Shape {
    /// Normal with the given coefficient of variation (values clamped > 0).
    Normal,
    /// Lognormal with the given coefficient of variation.
    Lognormal,
    /// Lognormal, and with probability 0.2 a second mode 25% higher.
    Bimodal,
    /// exp(s·T₃): Student-t with 3 degrees of freedom on the log scale, s
    /// chosen so the log-scale spread equals the lognormal one.
    StudentT,
    /// Lognormal around 20, rounded to integers: many ties.
    Ties,
    /// Lognormal with a linear 5% slowdown across the run, arms interleaved
    /// (B, C, B, C, ...): both arms see the same drift.
    DriftInterleaved,
    /// As `DriftInterleaved` but all baseline runs first, then all
    /// candidate runs: the candidate sees ~5% more slowdown.
    DriftSequential,
    /// Lognormal, and with probability 0.05 a value 3× larger.
    Contaminated,
}

impl Shape {
    /// Every shape, in the order the validation report lists them.
    pub const ALL: [Shape; 8] = [
        Shape::Normal,
        Shape::Lognormal,
        Shape::Bimodal,
        Shape::StudentT,
        Shape::Ties,
        Shape::DriftInterleaved,
        Shape::DriftSequential,
        Shape::Contaminated,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Shape::Normal => "normal",
            Shape::Lognormal => "lognormal",
            Shape::Bimodal => "bimodal",
            Shape::StudentT => "student-t",
            Shape::Ties => "ties",
            Shape::DriftInterleaved => "drift-interleaved",
            Shape::DriftSequential => "drift-sequential",
            Shape::Contaminated => "contaminated",
        }
    }

    /// Parses a command-line name.
    pub fn from_name(name: &str) -> Option<Shape> {
        Shape::ALL.into_iter().find(|shape| shape.name() == name)
    }

    /// One-line description for reports.
    pub fn describe(self, cv: f64) -> String {
        let cv = cv * 100.0;
        match self {
            Shape::Normal => format!("normal, CV {cv}%"),
            Shape::Lognormal => format!("lognormal, CV {cv}%"),
            Shape::Bimodal => format!("bimodal 80/20, second mode +25%, each mode CV {cv}%"),
            Shape::StudentT => format!("Student-t 3 df on the log scale, spread of CV {cv}%"),
            Shape::Ties => format!("integers around 20 (CV {cv}%): many ties"),
            Shape::DriftInterleaved => {
                format!("lognormal CV {cv}% + 5% linear drift, interleaved order")
            }
            Shape::DriftSequential => {
                format!("lognormal CV {cv}% + 5% linear drift, all baseline runs first")
            }
            Shape::Contaminated => format!("lognormal CV {cv}% + 5% of values at 3x"),
        }
    }
}

/// A shape with its spread.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Noise {
    /// The shape.
    pub shape: Shape,
    /// Coefficient of variation of the underlying lognormal/normal part.
    pub cv: f64,
}

/// Total drift across a run, as a relative slowdown (5%).
const DRIFT: f64 = 0.05;

impl Noise {
    /// Draws `runs` values per arm for `arms` arms (arm 0 the baseline, the
    /// rest scaled by 1 + `change`), in the execution order the shape
    /// implies: interleaved slot = run·arms + arm, sequential slot =
    /// arm·runs + run. Values are returned per arm in run order.
    pub fn draw<R: Rng>(
        &self,
        rng: &mut R,
        arms: usize,
        runs: usize,
        change: f64,
    ) -> Vec<Vec<f64>> {
        let slots = (arms * runs).max(2) as f64 - 1.0;
        let log_sd = log_sd_from_cv(self.cv);
        let mut values = vec![Vec::with_capacity(runs); arms];
        for run in 0..runs {
            for (arm, arm_values) in values.iter_mut().enumerate() {
                let slot = match self.shape {
                    Shape::DriftSequential => arm * runs + run,
                    _ => run * arms + arm,
                } as f64;
                let mut factor = if arm == 0 { 1.0 } else { 1.0 + change };
                if matches!(self.shape, Shape::DriftInterleaved | Shape::DriftSequential) {
                    // Throughput falls as the machine slows down.
                    factor *= 1.0 - DRIFT * slot / slots;
                }
                arm_values.push(self.value(rng, log_sd, factor));
            }
        }
        values
    }

    fn value<R: Rng>(&self, rng: &mut R, log_sd: f64, factor: f64) -> f64 {
        match self.shape {
            Shape::Normal => (factor * (1.0 + self.cv * standard_normal(rng))).max(1e-9),
            Shape::Lognormal | Shape::DriftInterleaved | Shape::DriftSequential => {
                factor * (log_sd * standard_normal(rng)).exp()
            }
            Shape::Bimodal => {
                let mode = if rng.random::<f64>() < 0.2 { 1.25 } else { 1.0 };
                factor * mode * (log_sd * standard_normal(rng)).exp()
            }
            Shape::StudentT => {
                let numerator = standard_normal(rng);
                let chi_square: f64 = (0..3).map(|_| standard_normal(rng).powi(2)).sum();
                let t = numerator / (chi_square / 3.0).sqrt();
                factor * (log_sd / 3f64.sqrt() * t).exp()
            }
            Shape::Ties => (20.0 * factor * (log_sd * standard_normal(rng)).exp())
                .round()
                .max(1.0),
            Shape::Contaminated => {
                let outlier = if rng.random::<f64>() < 0.05 { 3.0 } else { 1.0 };
                factor * outlier * (log_sd * standard_normal(rng)).exp()
            }
        }
    }
}

/// A standard normal variate (Box–Muller, one of the pair).
pub fn standard_normal<R: Rng>(rng: &mut R) -> f64 {
    // 1 − U lies in (0, 1], so the logarithm is finite.
    let uniform: f64 = 1.0 - rng.random::<f64>();
    let angle: f64 = rng.random::<f64>() * std::f64::consts::TAU;
    (-2.0 * uniform.ln()).sqrt() * angle.cos()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn log_moments(values: &[f64]) -> (f64, f64) {
        let logs: Vec<f64> = values.iter().map(|value| value.ln()).collect();
        let mean = logs.iter().sum::<f64>() / logs.len() as f64;
        let variance =
            logs.iter().map(|log| (log - mean).powi(2)).sum::<f64>() / (logs.len() - 1) as f64;
        (mean, variance.sqrt())
    }

    #[test]
    fn lognormal_has_the_requested_spread_and_change() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let noise = Noise {
            shape: Shape::Lognormal,
            cv: 0.30,
        };
        let arms = noise.draw(&mut rng, 2, 20_000, -0.19);
        let (base_mean, base_sd) = log_moments(&arms[0]);
        let (candidate_mean, _) = log_moments(&arms[1]);
        assert!((base_sd - log_sd_from_cv(0.30)).abs() < 0.01, "{base_sd}");
        assert!(
            ((candidate_mean - base_mean) - 0.81f64.ln()).abs() < 0.01,
            "{candidate_mean} {base_mean}"
        );
    }

    #[test]
    fn sequential_drift_penalises_the_candidate_only() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let noise = Noise {
            shape: Shape::DriftSequential,
            cv: 0.01,
        };
        let arms = noise.draw(&mut rng, 2, 2_000, 0.0);
        let (base_mean, _) = log_moments(&arms[0]);
        let (candidate_mean, _) = log_moments(&arms[1]);
        // Baseline averages 1.25% slowdown, candidate 3.75%.
        assert!((candidate_mean - base_mean + 0.025).abs() < 0.003);
        let interleaved = Noise {
            shape: Shape::DriftInterleaved,
            cv: 0.01,
        };
        let arms = interleaved.draw(&mut rng, 2, 2_000, 0.0);
        let (base_mean, _) = log_moments(&arms[0]);
        let (candidate_mean, _) = log_moments(&arms[1]);
        assert!((candidate_mean - base_mean).abs() < 0.002);
    }

    #[test]
    fn shapes_produce_their_features() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let ties = Noise {
            shape: Shape::Ties,
            cv: 0.13,
        }
        .draw(&mut rng, 1, 1_000, 0.0);
        let mut distinct = ties[0].clone();
        distinct.sort_by(f64::total_cmp);
        distinct.dedup();
        assert!(distinct.len() < 20, "{}", distinct.len());
        let contaminated = Noise {
            shape: Shape::Contaminated,
            cv: 0.05,
        }
        .draw(&mut rng, 1, 10_000, 0.0);
        let high = contaminated[0].iter().filter(|value| **value > 2.0).count();
        assert!((400..600).contains(&high), "{high}");
        for shape in Shape::ALL {
            assert_eq!(Shape::from_name(shape.name()), Some(shape));
            let values = Noise { shape, cv: 0.3 }.draw(&mut rng, 3, 200, 0.1);
            assert!(values.iter().flatten().all(|value| *value > 0.0));
        }
    }
}
