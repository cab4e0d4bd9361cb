//! The task set of a co-location workload: inference requests (synthetic arrivals or a trace)
//! and training tasks, drawn from the spec with a seeded RNG.

use super::trace::TraceRequest;
use crate::plan::colocation::{Task, TaskId, TaskKind};
use crate::rng::SeededRng;
use crate::spec::colocation::{ArrivalProcess, ColocationSpec, DistKind, TokenDist};

/// A standard normal draw (Box–Muller).
fn normal(rng: &mut SeededRng) -> f64 {
    let u1 = rng.unit().max(f64::MIN_POSITIVE);
    let u2 = rng.unit();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// A token count from a distribution, rounded and clipped to [min, max].
pub fn draw_tokens(d: &TokenDist, rng: &mut SeededRng) -> u32 {
    let x = match d.dist {
        DistKind::Constant => d.mean,
        DistKind::Uniform => {
            // Uniform with the given mean and standard deviation: half-width sd·√3.
            let half = d.sd * 3f64.sqrt();
            d.mean - half + 2.0 * half * rng.unit()
        }
        DistKind::Lognormal => {
            let var = (1.0 + (d.sd / d.mean).powi(2)).ln();
            let mu = d.mean.ln() - var / 2.0;
            (mu + var.sqrt() * normal(rng)).exp()
        }
    };
    (x.round() as i64).clamp(d.min.max(1), d.max.max(1)) as u32
}

pub use crate::spec::colocation::training_count;

/// The task set: inference requests first (ids in arrival order), then the training tasks.
/// Explicit `requests`, else a trace's rows (up to `count`), replace the synthetic arrivals and
/// lengths.
pub fn tasks(spec: &ColocationSpec, trace: Option<&[TraceRequest]>, seed: u64) -> Vec<Task> {
    let mut rng = SeededRng::new(seed);
    let inf = &spec.inference;
    let count = inf.count.max(0) as usize;
    let explicit: Option<Vec<TraceRequest>> = inf.requests.as_ref().map(|rs| {
        rs.iter()
            .map(|r| TraceRequest {
                arrival_s: r.arrival_s.max(0.0),
                prompt_tokens: r.prompt_tokens.max(1) as u32,
                output_tokens: r.output_tokens.max(0) as u32,
            })
            .collect()
    });
    let trace = explicit.as_deref().or(trace);
    let mut requests: Vec<(f64, u32, u32)> = match trace {
        Some(rows) => rows
            .iter()
            .take(count)
            .map(|r| (r.arrival_s, r.prompt_tokens.max(1), r.output_tokens))
            .collect(),
        None => {
            let (process, rate) = inf
                .arrival
                .as_ref()
                .map_or((ArrivalProcess::Uniform, 1.0), |a| {
                    (a.process, a.rate_rps.max(1e-9))
                });
            let mut t = 0.0;
            (0..count)
                .map(|i| {
                    if i > 0 {
                        t += match process {
                            ArrivalProcess::Poisson => -(1.0 - rng.unit()).ln() / rate,
                            ArrivalProcess::Uniform => 1.0 / rate,
                        };
                    }
                    let prompt = draw_tokens(&inf.prompt_tokens, &mut rng);
                    let output = draw_tokens(&inf.output_tokens, &mut rng);
                    (t, prompt, output)
                })
                .collect()
        }
    };
    requests.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out: Vec<Task> = requests
        .into_iter()
        .enumerate()
        .map(|(i, (arrival_s, prompt_tokens, output_tokens))| Task {
            id: TaskId(i as u32),
            kind: TaskKind::Inference {
                prompt_tokens,
                output_tokens,
            },
            arrival_s,
        })
        .collect();
    let n_inf = out.len();
    let tr = &spec.training;
    for j in 0..training_count(n_inf, tr.rate) {
        out.push(Task {
            id: TaskId((n_inf + j) as u32),
            kind: TaskKind::Training {
                tokens: draw_tokens(&tr.tokens, &mut rng),
                batch: tr.batch_size.max(1) as u32,
            },
            arrival_s: 0.0,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> ColocationSpec {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/workloads/colocation-small.toml"
        ))
        .expect("example");
        toml::from_str(&text).expect("valid example")
    }

    #[test]
    fn counts_arrivals_and_lengths_follow_the_spec() {
        let s = spec();
        let t = tasks(&s, None, 1);
        let inference = t.iter().filter(|t| !t.is_training()).count();
        assert_eq!(inference, 300);
        assert_eq!(t.len() - inference, 129, "round(300 · 0.3 / 0.7)");
        let last = t[inference - 1].arrival_s;
        // Poisson at 12 rps: 299 gaps of mean 1/12 s.
        assert!((last - 299.0 / 12.0).abs() < 6.0, "{last}");
        let mean_prompt = t[..inference]
            .iter()
            .map(|t| t.forward_shape().1 as f64)
            .sum::<f64>()
            / inference as f64;
        assert!((mean_prompt - 600.0).abs() < 80.0, "{mean_prompt}");
        assert!(t.iter().all(|t| t.forward_shape().1 <= 4096));
        assert_eq!(tasks(&s, None, 1), t, "same seed, same tasks");
        assert_ne!(tasks(&s, None, 2), t);
    }

    #[test]
    fn a_trace_replaces_synthetic_arrivals() {
        let s = spec();
        let rows = [
            TraceRequest {
                arrival_s: 0.5,
                prompt_tokens: 10,
                output_tokens: 3,
            },
            TraceRequest {
                arrival_s: 0.0,
                prompt_tokens: 20,
                output_tokens: 0,
            },
        ];
        let t = tasks(&s, Some(&rows), 1);
        assert_eq!(t[0].arrival_s, 0.0);
        assert_eq!(t[0].forward_shape(), (1, 20));
        assert_eq!(t.iter().filter(|t| !t.is_training()).count(), 2);
    }
}
