//! Per-server memos of the planners' scans, kept with a server until it changes.

use std::any::Any;
use std::sync::{Arc, OnceLock};

/// Results of planners' scans of one server, kept with the server until it changes. A
/// sequence of decisions changes a few servers each: on the others a planner reuses what it
/// found before instead of scanning them again. Each result is stored with the inputs it was
/// computed from (its type's own key); a planner takes one only when they are its own. The
/// memo is not part of the state: states compare equal whatever their memos hold, and a
/// clone shares the results computed so far. Reading a kept result takes no lock.
#[derive(Default, Clone)]
pub struct ScanMemo([MemoSlot; ScanMemo::SLOTS]);

type MemoSlot = OnceLock<Arc<dyn Any + Send + Sync>>;

impl ScanMemo {
    /// Results kept per server: a few preemptor classes at once. Once every slot is taken,
    /// further results are computed each time (until the server changes).
    const SLOTS: usize = 4;

    /// The kept result of type `T` for which `matches` holds, else `compute`'s, kept when a
    /// slot is free (`Err` with the result when none is).
    pub fn get_or_insert<T: Any + Send + Sync>(
        &self,
        matches: impl Fn(&T) -> bool,
        compute: impl FnOnce() -> T,
    ) -> Result<&T, Arc<T>> {
        fn kept<'m, T: Any>(slot: &'m MemoSlot, matches: &impl Fn(&T) -> bool) -> Option<&'m T> {
            slot.get()
                .and_then(|v| v.downcast_ref::<T>())
                .filter(|v| matches(v))
        }
        if let Some(hit) = self.0.iter().find_map(|s| kept(s, &matches)) {
            return Ok(hit);
        }
        let value = Arc::new(compute());
        for slot in &self.0 {
            // A slot another thread filled first is skipped.
            if slot.set(value.clone()).is_ok()
                && let Some(v) = kept(slot, &matches)
            {
                return Ok(v);
            }
        }
        Err(value)
    }

    /// How many results are kept.
    pub fn len(&self) -> usize {
        self.0.iter().filter(|s| s.get().is_some()).count()
    }

    /// Whether no result is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl PartialEq for ScanMemo {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for ScanMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ScanMemo({} results)", self.len())
    }
}
