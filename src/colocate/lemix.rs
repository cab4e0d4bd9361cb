//! `lemix` and `lemix-balanced`: LeMix's node choice (research notes B3–B5). For each node it predicts, with its own
//! record of the work it assigned (Algorithm 1 `ComputeIdleness`), the idleness increase II the
//! task would cause — waiting on far dependencies, the pending backward passes of training
//! tasks — and the response time R; scores the node (Eq. 1–3) and takes the best. Training
//! tasks that would make the next inference request miss its SLO are deferred (Eq. 4).
//! Memory-aware wait-or-offload and continuous batching are the engine's.
//!
//! `lemix` scores nodes as the released code does (Eq. 3 with its sign, which favours
//! backlogged nodes and so consolidates); `lemix-balanced` is this project's variant with
//! normalised terms, where more idleness and a longer predicted R score lower. Only `lemix` is
//! the paper's policy.

use super::engine::{Assignment, Dispatcher, View};
use super::latency::LatencyModel;
use super::planner::OfferLog;
use super::planner::{ColocationPlanner, PlannerRun, run_dispatcher};
use super::setup::Setup;
use crate::plan::colocation::{Task, TaskKind};
use crate::plan::error::PlanningError;
use crate::plan::explain_colocation::{
    DeferralVerdict, LemixNodeTerms, LemixOffer, OfferAnswer, OfferRecord, OfferTerms,
};
use crate::spec::colocation::{Deprioritize, LemixSettings};

/// How LeMix scores a node (Eq. 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LemixScore {
    /// The released code: f = (IP + λ2·LC) / (λ1·R), LC the raw Gaussian pdf (`lemix`).
    Faithful,
    /// This project's variant: IP and R min–max normalised over the nodes, LC = exp(−z²/2),
    /// f = IP_norm + λ2·LC − λ1·R_norm (`lemix-balanced`).
    Balanced,
}

/// A pending training task's predicted backward window per stage.
#[derive(Debug, Clone)]
struct PendingBackward {
    bb: Vec<f64>,
    be: Vec<f64>,
    tokens: u32,
    batch: u32,
}

#[derive(Debug, Clone, Default)]
struct NodeModel {
    /// Predicted forward end of the last task on each stage.
    pfe: Vec<Option<f64>>,
    pending: Vec<PendingBackward>,
    last_arrival: Option<f64>,
    /// Welford statistics of the lengths assigned.
    count: u64,
    mean: f64,
    m2: f64,
}

/// What Algorithm 1 predicts for a task on a node.
#[derive(Debug, Clone)]
struct Prediction {
    response_s: f64,
    fe: Vec<f64>,
    backward: Option<(Vec<f64>, Vec<f64>)>,
}

/// LeMix's dispatcher for one run: its own record of the work it assigned to each node, from which
/// it predicts idleness increase II and response time R for every offer.
pub struct Lemix {
    settings: LemixSettings,
    score: LemixScore,
    latency: LatencyModel,
    stages: usize,
    /// τ_R.
    slo_s: f64,
    mean_prompt: u32,
    nodes: Vec<NodeModel>,
    /// The offers recorded, when asked (`record_offers`).
    records: OfferLog,
}

/// Every node's terms at one offer, as `best_node` scored them, and the best node with its
/// full prediction.
struct Scored {
    best: usize,
    prediction: Prediction,
    idleness: Vec<f64>,
    response: Vec<f64>,
    ip: Vec<f64>,
    lc: Vec<f64>,
    scores: Vec<f64>,
}

impl Lemix {
    /// A dispatcher for `nodes` nodes of `stages` stages with no work assigned yet; `slo_s` is τ_R
    /// and `mean_prompt` (tokens) sizes the next inference request in the deprioritisation check.
    pub fn new(
        settings: LemixSettings,
        score: LemixScore,
        latency: LatencyModel,
        nodes: usize,
        stages: usize,
        slo_s: f64,
        mean_prompt: u32,
    ) -> Self {
        Lemix {
            settings,
            score,
            latency,
            stages,
            slo_s,
            mean_prompt,
            nodes: vec![
                NodeModel {
                    pfe: vec![None; stages],
                    ..NodeModel::default()
                };
                nodes
            ],
            records: OfferLog::default(),
        }
    }

    /// Algorithm 1 for a task of shape (batch, tokens) arriving at `now` on node `n`.
    fn compute_idleness(
        &self,
        view: &View<'_>,
        n: usize,
        batch: u32,
        tokens: u32,
        training: bool,
    ) -> Prediction {
        let now = view.now;
        let mut fe_all = Vec::with_capacity(self.stages);
        let (_, last) = self.walk_stages(view, n, batch, tokens, Some(&mut fe_all));
        let backward = training.then(|| {
            let bl = self.latency.backward_s(batch, tokens);
            let mut bb = vec![0.0; self.stages];
            let mut be = vec![0.0; self.stages];
            let mut t = last;
            for s in (0..self.stages).rev() {
                bb[s] = t;
                be[s] = t + bl;
                t += bl;
            }
            (bb, be)
        });
        Prediction {
            response_s: (last - now).max(1e-9),
            fe: fe_all,
            backward,
        }
    }

    /// The idleness increase and the last stage's forward end of placing a forward of
    /// (`batch`, `tokens`) on node `n`; each stage's forward end goes to `fe_out` when given.
    /// Allocates nothing, so that scoring every node stays cheap.
    fn walk_stages(
        &self,
        view: &View<'_>,
        n: usize,
        batch: u32,
        tokens: u32,
        mut fe_out: Option<&mut Vec<f64>>,
    ) -> (f64, f64) {
        let node = &self.nodes[n];
        let now = view.now;
        let fl = self.latency.forward_s(batch, tokens);
        let mut fb = now;
        let mut ii = 0.0;
        let mut last = now;
        for s in 0..self.stages {
            let mut pfe = node.pfe[s].unwrap_or(now);
            if self.settings.decode_occupancy {
                // The engine's real backlog, decode iterations included.
                pfe = pfe.max(view.stage_backlog_end_at(n, s));
            }
            fb = fb.max(pfe);
            // Idleness is usable time made unusable: on a stage with no work queued at the
            // arrival, the pipeline's own fill time is not (an unused node is not penalised).
            let base = if pfe > now { pfe } else { fb };
            let mut fe = fb + fl;
            let mut offset = 0.0;
            for p in &node.pending {
                if fe <= p.bb[s] {
                    break;
                }
                fb = fb.max(p.be[s]);
                fe = fb + fl;
                if pfe <= p.bb[s] {
                    offset += self.latency.backward_s(p.batch, p.tokens);
                }
            }
            ii += (fb - base - offset).max(0.0);
            if let Some(out) = fe_out.as_deref_mut() {
                out.push(fe);
            }
            last = fe;
            // Pipeline order: the next stage starts after this one (the released code does not
            // chain: `chain_stages = false`).
            if self.settings.chain_stages {
                fb = fe;
            }
        }
        (ii, last)
    }

    fn length_consistency(&self, n: usize, tokens: u32) -> f64 {
        let m = &self.nodes[n];
        if m.count < 2 {
            return 0.0;
        }
        let sd = (m.m2 / (m.count - 1) as f64).sqrt();
        if sd <= 0.0 {
            return 0.0;
        }
        let z = (tokens as f64 - m.mean) / sd;
        match self.score {
            // The released code's raw Gaussian pdf.
            LemixScore::Faithful => {
                (-z * z / 2.0).exp() / (sd * (2.0 * std::f64::consts::PI).sqrt())
            }
            LemixScore::Balanced => (-z * z / 2.0).exp(),
        }
    }

    fn best_node(&self, view: &View<'_>, task: &Task) -> Scored {
        let (batch, tokens) = task.forward_shape();
        let training = task.is_training();
        // Idleness and response of every node; the full prediction only for the chosen one.
        let (idleness, response): (Vec<f64>, Vec<f64>) = (0..view.config.nodes)
            .map(|n| {
                let (ii, last) = self.walk_stages(view, n, batch, tokens, None);
                (ii, (last - view.now).max(1e-9))
            })
            .unzip();
        let s = &self.settings;
        let ip: Vec<f64> = idleness
            .iter()
            .enumerate()
            .map(|(n, ii)| {
                let gap = self.nodes[n].last_arrival.map_or(0.0, |a| view.now - a);
                -(ii / self.stages as f64 - gap).max(s.tau)
            })
            .collect();
        let lc: Vec<f64> = (0..view.config.nodes)
            .map(|n| self.length_consistency(n, tokens))
            .collect();
        let scores: Vec<f64> = match self.score {
            LemixScore::Faithful => (0..response.len())
                .map(|n| (ip[n] + s.lambda2 * lc[n]) / (s.lambda1 * response[n]))
                .collect(),
            LemixScore::Balanced => {
                // Min-max over the nodes (all equal → `flat`): more idleness and a longer R
                // score lower.
                let norm = |v: &[f64], x: f64, flat: f64| {
                    let (lo, hi) = v
                        .iter()
                        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &y| {
                            (a.min(y), b.max(y))
                        });
                    if hi > lo { (x - lo) / (hi - lo) } else { flat }
                };
                let r = &response;
                (0..r.len())
                    .map(|n| {
                        norm(&ip, ip[n], 1.0) + s.lambda2 * lc[n] - s.lambda1 * norm(r, r[n], 0.0)
                    })
                    .collect()
            }
        };
        let best =
            (0..scores.len()).fold(0, |b, n| if scores[n] > scores[b] + 1e-15 { n } else { b });
        let prediction = if response.is_empty() {
            Prediction {
                response_s: 0.0,
                fe: vec![view.now; self.stages],
                backward: None,
            }
        } else {
            self.compute_idleness(view, best, batch, tokens, training)
        };
        Scored {
            best,
            prediction,
            idleness,
            response,
            ip,
            lc,
            scores,
        }
    }

    /// When stage 0 of node `m` is next free by this planner's record (and the engine's
    /// backlog, when decode occupancy is modelled): its last forward and pending backwards.
    fn stage0_free_at(&self, view: &View<'_>, m: usize) -> f64 {
        let node = &self.nodes[m];
        let mut free = node.pfe[0].unwrap_or(view.now).max(view.now);
        if self.settings.decode_occupancy
            && let Some(b) = view.stage_backlog_end(m).first()
        {
            free = free.max(*b);
        }
        node.pending
            .iter()
            .filter_map(|p| p.be.first().copied())
            .fold(free, f64::max)
    }

    fn commit(&mut self, view: &View<'_>, n: usize, task: &Task, p: Prediction) {
        let (batch, tokens) = task.forward_shape();
        let m = &mut self.nodes[n];
        for (s, fe) in p.fe.iter().enumerate() {
            m.pfe[s] = Some(*fe);
        }
        if let Some((bb, be)) = p.backward {
            m.pending.push(PendingBackward {
                bb,
                be,
                tokens,
                batch,
            });
        }
        let now = view.now;
        m.pending.retain(|q| q.be.first().is_some_and(|&e| e > now));
        m.last_arrival = Some(now);
        m.count += 1;
        let d = tokens as f64 - m.mean;
        m.mean += d / m.count as f64;
        m.m2 += d * (tokens as f64 - m.mean);
    }
}

impl Lemix {
    /// Eq. 4: whether a training task is deferred rather than placed on node `n` (its
    /// prediction `pred`), with the response the rule compared against the SLO. Consulted
    /// only for a training task while an inference arrival is still ahead.
    fn deferral(
        &self,
        view: &View<'_>,
        task: &Task,
        n: usize,
        pred: &Prediction,
    ) -> DeferralVerdict {
        let rule = self.settings.deprioritize;
        let consulted =
            matches!(task.kind, TaskKind::Training { .. }) && view.next_inference_arrival.is_some();
        let compared_response_s = if !consulted {
            None
        } else {
            match rule {
                Deprioritize::Off => None,
                // Released code: the training task's own predicted R against the SLO.
                Deprioritize::Threshold => Some(pred.response_s),
                // Paper: would the next inference request, arriving after it, miss its SLO?
                // It may go to any node: its best response over the nodes, with this task on
                // the chosen one.
                Deprioritize::Lookahead => {
                    let next = view.next_inference_arrival.unwrap_or(view.now);
                    let prefill = self.stages as f64 * self.latency.forward_s(1, self.mean_prompt);
                    let r_next = (0..view.config.nodes)
                        .map(|m| {
                            let busy_until = if m == n {
                                pred.backward.as_ref().map_or(pred.fe[0], |(_, be)| be[0])
                            } else {
                                self.stage0_free_at(view, m)
                            };
                            busy_until.max(next) - next + prefill
                        })
                        .fold(f64::INFINITY, f64::min);
                    Some(r_next)
                }
            }
        };
        DeferralVerdict {
            rule,
            consulted,
            next_arrival_s: view.next_inference_arrival,
            compared_response_s,
            slo_s: self.slo_s,
            defer: compared_response_s.is_some_and(|r| r > self.slo_s),
        }
    }

    /// The record of one offer, from the very terms `best_node` and `deferral` decided by.
    fn offer_record(
        &self,
        view: &View<'_>,
        task: &Task,
        scored: &Scored,
        deferral: DeferralVerdict,
        answer: OfferAnswer,
    ) -> OfferRecord {
        let s = &self.settings;
        let nodes = (0..scored.scores.len())
            .map(|n| LemixNodeTerms {
                node: n,
                idleness_increase_s: scored.idleness[n],
                ip: scored.ip[n],
                response_s: scored.response[n],
                length_consistency: scored.lc[n],
                score: scored.scores[n],
            })
            .collect();
        OfferRecord {
            task: task.id.0,
            time_s: view.now,
            answer,
            terms: OfferTerms::Lemix(LemixOffer {
                score: match self.score {
                    LemixScore::Faithful => "faithful",
                    LemixScore::Balanced => "balanced",
                },
                lambda1: s.lambda1,
                lambda2: s.lambda2,
                tau: s.tau,
                nodes,
                best: scored.best,
                deferral,
            }),
        }
    }
}

impl Dispatcher for Lemix {
    fn assign(&mut self, view: &View<'_>, task: &Task) -> Assignment {
        let scored = self.best_node(view, task);
        let n = scored.best;
        let deferral = self.deferral(view, task, n, &scored.prediction);
        let answer = if deferral.defer {
            OfferAnswer::Defer
        } else {
            OfferAnswer::Node(n)
        };
        if self.records.is_on() {
            let record = self.offer_record(view, task, &scored, deferral, answer);
            self.records.push(|| record);
        }
        if deferral.defer {
            return Assignment::Defer;
        }
        self.commit(view, n, task, scored.prediction);
        Assignment::Node(n)
    }

    fn record_offers(&mut self) -> bool {
        self.records.start()
    }

    fn take_offer_records(&mut self) -> Vec<OfferRecord> {
        self.records.take()
    }
}

/// The `lemix` (released-code score) and `lemix-balanced` (normalised score) planners.
pub struct LemixPlanner {
    score: LemixScore,
}

impl LemixPlanner {
    /// The planner with the given node score (`Faithful` for `lemix`, `Balanced` for
    /// `lemix-balanced`).
    pub fn new(score: LemixScore) -> Self {
        LemixPlanner { score }
    }

    /// The LeMix dispatcher of one run.
    pub fn dispatcher(&self, setup: &Setup) -> Lemix {
        let (spec, c) = (&setup.spec, &setup.config);
        Lemix::new(
            spec.lemix.clone(),
            self.score,
            c.latency,
            c.nodes,
            c.stages,
            setup.slo_s(),
            setup.mean_prompt.round() as u32,
        )
    }
}

impl ColocationPlanner for LemixPlanner {
    fn name(&self) -> &'static str {
        match self.score {
            LemixScore::Faithful => "lemix",
            LemixScore::Balanced => "lemix-balanced",
        }
    }

    fn run(&self, setup: &Setup, _: f64) -> Result<PlannerRun, PlanningError> {
        Ok(run_dispatcher(setup, &mut self.dispatcher(setup)))
    }

    fn dispatcher(&self, setup: &Setup) -> Option<Box<dyn Dispatcher>> {
        Some(Box::new(LemixPlanner::dispatcher(self, setup)))
    }
}
