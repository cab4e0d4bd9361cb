//! An enumeration of every string of answers a planner can give the co-location engine, each
//! run from scratch on a new engine and verified: the oracle of the exact search and of the
//! lower bounds on tiny instances. Written from the documented rules, not from the search's
//! code.

use coplan::colocate::engine::{Assignment, DiscreteEventEngine, Dispatcher, View};
use coplan::colocate::metrics::objective_term;
use coplan::colocate::setup::Setup;
use coplan::plan::colocation::Task;
use coplan::verify::colocation::verify_run;

/// The questions enumerated: every node for each offered task; deferral of a training task
/// while an inference arrival is ahead; at every `sync_every`-th completed training task, no
/// sync or a sync of `serving`.
pub struct DecisionSpace {
    pub nodes: usize,
    pub sync_every: u64,
    pub serving: Vec<usize>,
}

impl DecisionSpace {
    /// SEPARATE's sync points: every `separate_sync_every` training tasks, on its serving
    /// nodes (the last N − max(1, round(N · split)) nodes, or the last node when none is left).
    pub fn of(s: &Setup) -> DecisionSpace {
        let nodes = s.config.nodes;
        let split = s
            .spec
            .planners
            .separate_split
            .unwrap_or(s.spec.training.rate);
        let n_train = ((nodes as f64 * split).round() as usize).clamp(1, nodes);
        let serving: Vec<usize> = if n_train < nodes {
            (n_train..nodes).collect()
        } else {
            vec![nodes - 1]
        };
        DecisionSpace {
            nodes,
            sync_every: s.spec.planners.separate_sync_every.max(1) as u64,
            serving,
        }
    }
}

/// Answers the engine from a script of option indices (past its end: the first option),
/// recording how many options each question had.
struct Scripted<'a> {
    script: &'a [usize],
    options: Vec<usize>,
    given: Vec<usize>,
    space: &'a DecisionSpace,
}

impl Scripted<'_> {
    fn answer(&mut self, options: usize) -> usize {
        let pick = self.script.get(self.given.len()).copied().unwrap_or(0);
        self.options.push(options);
        self.given.push(pick);
        pick
    }
}

impl Dispatcher for Scripted<'_> {
    fn assign(&mut self, view: &View<'_>, task: &Task) -> Assignment {
        let nodes = self.space.nodes;
        let defer = task.is_training() && view.next_inference_arrival.is_some();
        let pick = self.answer(nodes + usize::from(defer));
        if pick < nodes {
            Assignment::Node(pick)
        } else {
            Assignment::Defer
        }
    }

    fn on_training_done(&mut self, completed: u64) -> Option<Vec<usize>> {
        if !completed.is_multiple_of(self.space.sync_every.max(1)) {
            return None;
        }
        (self.answer(2) == 1).then(|| self.space.serving.clone())
    }
}

/// The best objective over every string of answers in `space`, each run from scratch on a new
/// engine and verified; `None` past `max_runs` runs.
pub fn best_over_every_decision(s: &Setup, space: &DecisionSpace, max_runs: usize) -> Option<f64> {
    let tau = (s.spec.inference.slo_factor * s.slo_base_s).max(1e-12);
    let mut best = f64::INFINITY;
    let mut scripts: Vec<Vec<usize>> = vec![Vec::new()];
    let mut runs = 0;
    while let Some(script) = scripts.pop() {
        runs += 1;
        if runs > max_runs {
            return None;
        }
        let mut d = Scripted {
            script: &script,
            options: Vec::new(),
            given: Vec::new(),
            space,
        };
        let run = DiscreteEventEngine::new(&s.config, &s.tasks).run(&mut d);
        verify_run(&s.config.bounds(), &s.tasks, &run).expect("every run verifies");
        let cost: f64 = run
            .outcomes
            .iter()
            .map(|o| objective_term(o, tau, &s.spec.objective))
            .sum();
        best = best.min(cost);
        for j in script.len()..d.given.len() {
            for alt in 1..d.options[j] {
                let mut next = d.given[..j].to_vec();
                next.push(alt);
                scripts.push(next);
            }
        }
    }
    Some(best)
}
