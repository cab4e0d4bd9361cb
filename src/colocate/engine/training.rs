//! Training release (A-PP): one training task holds the slot until its stage-0 forward ends,
//! it is deferred or dropped, or `app_timeout_s` passes (`AppTimeout`); then the next one is
//! released (`Arrive`). Also LeMix's deferral queue and a training task's completion (with
//! SEPARATE's weight syncs).

use super::dispatch::Dispatcher;
use super::event::Event;
use super::simulator::DiscreteEventEngine;
use super::state::Pending;
use crate::plan::colocation::TaskId;

impl<'a> DiscreteEventEngine<'a> {
    /// Ends the A-PP slot of a training task's current offer, once: its stage-0 forward ended,
    /// it was dropped before running, or A-PP's timeout fired. The next task is released.
    pub(super) fn close_slot(&mut self, id: TaskId) {
        if std::mem::take(&mut self.slot_open[id.index()]) {
            let now = self.now;
            self.release_training(now);
        }
    }

    /// A-PP: release the next training task (deferred ones first: the smallest id).
    pub(super) fn release_training(&mut self, at: f64) {
        let next = match (self.deferred.front(), self.fresh_training.front()) {
            (Some(d), Some(f)) if d < f => self.deferred.pop_front(),
            (Some(_), None) => self.deferred.pop_front(),
            _ => self.fresh_training.pop_front(),
        };
        if let Some(id) = next {
            let released = &mut self.outcomes[id.index()].released_s;
            if released.is_none() {
                *released = Some(at);
            }
            self.open_slot(id, at);
        }
    }

    /// A-PP offers a training task: it holds A-PP's slot until its stage-0 forward ends, it is
    /// deferred or dropped, or `app_timeout_s` passes.
    pub(super) fn open_slot(&mut self, id: TaskId, at: f64) {
        self.offers[id.index()] += 1;
        self.slot_open[id.index()] = true;
        let offer = self.offers[id.index()];
        self.push(at, Event::Arrive(id));
        self.push(
            at + self.cfg.app_timeout_s,
            Event::AppTimeout { task: id, offer },
        );
    }

    /// Releases the next fresh (never offered) training task.
    pub(super) fn release_fresh(&mut self, at: f64) {
        if let Some(id) = self.fresh_training.pop_front() {
            self.outcomes[id.index()].released_s = Some(at);
            self.open_slot(id, at);
        }
    }

    /// Deprioritises a training task (LeMix's SLO-aware deferral): it waits in the deferred
    /// queue, offered again one per inference arrival. Every deferral hands A-PP's slot to the
    /// next fresh task, so training never stalls behind a deferred one.
    pub(super) fn defer(&mut self, id: TaskId) {
        self.outcomes[id.index()].deferrals += 1;
        self.deferred.push_back(id);
        if std::mem::take(&mut self.slot_open[id.index()]) {
            self.release_fresh(self.now);
        }
    }

    /// Each inference arrival offers one deferred training task again; the last one offers
    /// them all (nothing is left to protect).
    pub(super) fn offer_deferred(&mut self) {
        if self.deferred.is_empty() {
            return;
        }
        let more_arrivals = self.view().next_inference_arrival.is_some();
        let n = if more_arrivals {
            1
        } else {
            self.deferred.len()
        };
        for _ in 0..n {
            if let Some(t) = self.deferred.pop_front() {
                self.push(self.now, Event::Arrive(t));
            }
        }
    }

    /// A training task's last backward ended (on stage 0): it is done, the node's replica
    /// reflects it, and the planner may ask for weight syncs (SEPARATE), which queue on every
    /// stage of the synced nodes.
    pub(super) fn complete_training(
        &mut self,
        node: usize,
        id: TaskId,
        planner: &mut dyn Dispatcher,
    ) {
        let now = self.now;
        self.outcomes[id.index()].end_s = Some(now);
        self.training_done += 1;
        self.nodes[node].reflected += 1;
        if let Some(synced) = planner.on_training_done(self.training_done) {
            for n in synced {
                if n < self.cfg.nodes {
                    self.nodes[n].reflected = self.training_done;
                    for s in 0..self.cfg.stages {
                        let est = self.cfg.weights_mib / self.cfg.offload_mib_per_s;
                        self.enqueue(n, s, Pending::Sync, est);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;
    use crate::colocate::engine::{Assignment, View};
    use crate::plan::colocation::Task;
    use crate::verify::colocation::verify_run;

    #[test]
    fn training_is_released_when_the_previous_one_ends_its_first_forward() {
        let cfg = config();
        let r = run(&cfg, &[training(0), training(1)]);
        assert!(close(r.outcomes[0].released_s.unwrap_or(f64::NAN), 0.0));
        assert!(close(r.outcomes[1].arrival_s, 0.0), "submitted at 0");
        assert!(
            close(r.outcomes[1].released_s.unwrap_or(f64::NAN), 1.0),
            "A-PP release at the end of the stage-0 forward"
        );
    }

    /// Defers a training task on its first `times` offers, then runs everything on node 0.
    struct DeferFirst {
        task: TaskId,
        times: u32,
    }
    impl Dispatcher for DeferFirst {
        fn assign(&mut self, _: &View<'_>, task: &Task) -> Assignment {
            if task.id == self.task && self.times > 0 {
                self.times -= 1;
                Assignment::Defer
            } else {
                Assignment::Node(0)
            }
        }
    }

    #[test]
    fn every_deferral_releases_the_next_training_task() {
        let cfg = config();
        // Training 0 is deferred at 0: A-PP's slot passes to training 1, which runs [0,1] on
        // stage 0. At 1.0 A-PP offers the smallest id again, training 0, which is deferred a
        // second time: that deferral too passes the slot on, to training 2 (released at 1.0,
        // stage 0 [1,2]). At 2.0 training 0 is offered a third time and runs. Without the
        // second hand-over nothing would run until request 3's arrival at 5.
        let tasks = [training(0), training(1), training(2), inference(3, 5.0, 0)];
        let mut planner = DeferFirst {
            task: TaskId(0),
            times: 2,
        };
        let r = DiscreteEventEngine::new(&cfg, &tasks).run(&mut planner);
        verify_run(&cfg.bounds(), &tasks, &r).expect("the verifier accepts the run");
        assert!(close(r.outcomes[1].released_s.unwrap_or(f64::NAN), 0.0));
        assert!(
            close(r.outcomes[2].released_s.unwrap_or(f64::NAN), 1.0),
            "{:?}",
            r.outcomes[2]
        );
        let t0 = &r.outcomes[0];
        assert_eq!(t0.deferrals, 2);
        assert!(close(t0.start_s.unwrap_or(0.0), 2.0), "{t0:?}");
        assert!(r.outcomes.iter().all(|o| o.end_s.is_some()));
    }

    #[test]
    fn app_timeout_releases_the_next_training_task() {
        let mut cfg = config();
        cfg.app_timeout_s = 0.25;
        // A request holds stage 0 in [0,1]; training 0 (released at 0) cannot start its
        // forward before 1.0, so A-PP's timeout releases training 1 at 0.25.
        let tasks = [inference(0, 0.0, 0), training(1), training(2)];
        let r = run(&cfg, &tasks);
        assert!(close(r.outcomes[1].released_s.unwrap_or(f64::NAN), 0.0));
        assert!(
            close(r.outcomes[2].released_s.unwrap_or(f64::NAN), 0.25),
            "{:?}",
            r.outcomes[2].released_s
        );
    }
}
