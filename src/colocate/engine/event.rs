//! The engine's events and their order, `EventKey`: time by `total_cmp`, then sequence
//! number.

use crate::plan::colocation::TaskId;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Event {
    Arrive(TaskId),
    /// A-PP's timeout for the `offer`-th offer of a training task.
    AppTimeout {
        task: TaskId,
        offer: u32,
    },
    OpDone {
        node: usize,
        stage: usize,
    },
    Wake {
        node: usize,
    },
}

/// An event's place in the order of events, (time by `total_cmp`, sequence number), as two
/// integers: the time's bits mapped so that unsigned order is `total_cmp`'s. Sequence numbers
/// are unique, so no two events share a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct EventKey {
    pub(super) time_bits: u64,
    pub(super) seq: u64,
}

impl EventKey {
    pub(super) const SIGN: u64 = 1 << 63;
    /// After every event.
    pub(super) const LAST: EventKey = EventKey {
        time_bits: u64::MAX,
        seq: u64::MAX,
    };

    pub(super) fn new(at: f64, seq: u64) -> Self {
        let b = at.to_bits();
        let time_bits = if b & Self::SIGN != 0 {
            !b
        } else {
            b | Self::SIGN
        };
        EventKey { time_bits, seq }
    }

    pub(super) fn time(&self) -> f64 {
        let b = self.time_bits;
        f64::from_bits(if b & Self::SIGN != 0 {
            b & !Self::SIGN
        } else {
            !b
        })
    }
}
