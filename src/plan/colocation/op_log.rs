//! The op log of a run: every op executed, packed so that millions of them stay small.

use serde::Serialize;

use super::task::TaskId;
use super::task_list::TaskList;

/// What an op did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum OpKind {
    /// A forward (prefill) pass through one stage.
    Forward,
    /// A training backward pass through one stage.
    Backward,
    /// One decode iteration of the node's batch through one stage.
    Decode,
    /// Moving a forward's memory to the host before it runs (memory-wait timeout).
    Offload,
    /// Bringing offloaded memory back for the op that needs it (a backward, a decode
    /// iteration).
    Reload,
    /// A weight sync from training to serving nodes (SEPARATE).
    Sync,
}

impl OpKind {
    /// Every kind, in declaration order.
    pub const ALL: [OpKind; 6] = [
        OpKind::Forward,
        OpKind::Backward,
        OpKind::Decode,
        OpKind::Offload,
        OpKind::Reload,
        OpKind::Sync,
    ];
}

/// One executed op: the timeline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OpRecord {
    /// Node (co-location server) the op ran on, `0..nodes`.
    pub node: usize,
    /// Pipeline stage (the node's GPU) the op ran on, `0..stages`.
    pub stage: usize,
    /// What the op did.
    pub kind: OpKind,
    /// Tasks served: one for forward/backward/offload, the batch for decode, none for sync.
    pub tasks: TaskList,
    /// Start of the op, in seconds since the start of the run.
    pub start_s: f64,
    /// End of the op, in seconds since the start of the run (≥ `start_s`).
    pub end_s: f64,
}

/// The op log of a run, in the order the ops ended. A run logs millions of ops (a decode
/// iteration per token and stage), so each is held in 24 bytes: its times, its task when it
/// has one (else an index into a shared table of task lists, which the stage ops of one
/// decode iteration share), and node, stage and kind packed in 32 bits. Read it as [`Op`]s;
/// [`OpRecord`]s convert to and from it.
#[derive(Debug, Clone, Default)]
pub struct OpLog {
    entries: Vec<LogEntry>,
    /// The task lists of ops with several tasks: list b is `task_ids[ends[b - 1]..ends[b]]`.
    task_ids: Vec<TaskId>,
    ends: Vec<usize>,
    /// An op whose node, stage or list index did not fit its field: the log is incomplete,
    /// and the verifier rejects it.
    overflowed: bool,
}

#[derive(Debug, Clone, Copy)]
struct LogEntry {
    start_s: f64,
    end_s: f64,
    /// The task (`len == 1`) or the list index in `OpLog::ends` (`len == 2`).
    tasks: TaskId,
    /// `len` (2 bits), kind (3), stage (11), node (16), from the low bits up.
    packed: u32,
}

/// Every kind, in declaration order (a log entry stores the discriminant).
const KINDS: [OpKind; 6] = OpKind::ALL;

impl LogEntry {
    fn len(&self) -> u32 {
        self.packed & 0b11
    }

    fn kind(&self) -> OpKind {
        KINDS[((self.packed >> 2) & 0b111) as usize % KINDS.len()]
    }

    fn stage(&self) -> usize {
        ((self.packed >> 5) & 0x7ff) as usize
    }

    fn node(&self) -> usize {
        (self.packed >> 16) as usize
    }
}

/// The tasks of an op as the log holds them: none, one, or a shared list. Made by
/// [`OpLog::tasks`], so that the stage ops of a decode iteration store its batch once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoggedTasks {
    tasks: TaskId,
    len: u8,
}

impl Default for LoggedTasks {
    fn default() -> Self {
        LoggedTasks {
            tasks: TaskId(0),
            len: 0,
        }
    }
}

/// One op of an [`OpLog`], read in place.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Op<'a> {
    /// Node the op ran on, `0..nodes`.
    pub node: usize,
    /// Pipeline stage (GPU of the node) the op ran on, `0..stages`.
    pub stage: usize,
    /// What the op did.
    pub kind: OpKind,
    /// Tasks served: one for forward/backward/offload/reload, the batch for decode, none for sync.
    pub tasks: &'a [TaskId],
    /// Start of the op, in seconds since the start of the run.
    pub start_s: f64,
    /// End of the op, in seconds since the start of the run.
    pub end_s: f64,
}

impl Op<'_> {
    /// The op as an owned [`OpRecord`].
    pub fn to_record(&self) -> OpRecord {
        OpRecord {
            node: self.node,
            stage: self.stage,
            kind: self.kind,
            tasks: TaskList::from_slice(self.tasks),
            start_s: self.start_s,
            end_s: self.end_s,
        }
    }
}

impl OpLog {
    /// What one op takes in the log, besides a shared task list.
    pub const ENTRY_BYTES: usize = std::mem::size_of::<LogEntry>();
    /// Nodes and stages an op may name (16 and 11 bits of its entry).
    pub const MAX_NODES: usize = 1 << 16;
    /// Stages an op may name: indices below 2 048 (11 bits of its entry).
    pub const MAX_STAGES: usize = 1 << 11;

    /// An empty log.
    pub fn new() -> Self {
        Self::default()
    }

    /// Room for `ops` more ops, if the memory is there (else the log grows as it goes).
    pub fn reserve(&mut self, ops: usize) {
        let _ = self.entries.try_reserve_exact(ops);
    }

    /// Number of ops logged.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no op has been logged.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether an op did not fit the log (more than 65 536 nodes, 2 048 stages or 2^32 task
    /// lists): what was logged is then not the whole run.
    pub fn overflowed(&self) -> bool {
        self.overflowed
    }

    /// Stores the tasks of one or more ops (a list is stored once, however many ops use it).
    pub fn tasks(&mut self, ids: &[TaskId]) -> LoggedTasks {
        match ids {
            [] => LoggedTasks::default(),
            [id] => LoggedTasks { tasks: *id, len: 1 },
            _ => match u32::try_from(self.ends.len()) {
                Ok(b) => {
                    self.task_ids.extend_from_slice(ids);
                    self.ends.push(self.task_ids.len());
                    LoggedTasks {
                        tasks: TaskId(b),
                        len: 2,
                    }
                }
                Err(_) => {
                    self.overflowed = true;
                    LoggedTasks::default()
                }
            },
        }
    }

    /// Logs one op.
    pub fn push(
        &mut self,
        node: usize,
        stage: usize,
        kind: OpKind,
        tasks: LoggedTasks,
        start_s: f64,
        end_s: f64,
    ) {
        if node >= Self::MAX_NODES || stage >= Self::MAX_STAGES {
            self.overflowed = true;
            return;
        }
        // `KINDS` lists the kinds in declaration order: the discriminant is the index.
        let kind_bits = kind as u32;
        self.entries.push(LogEntry {
            start_s,
            end_s,
            tasks: tasks.tasks,
            packed: u32::from(tasks.len)
                | kind_bits << 2
                | (stage as u32) << 5
                | (node as u32) << 16,
        });
    }

    /// Logs one op given as a record (its task list stored as [`OpLog::tasks`] does).
    pub fn push_record(&mut self, op: &OpRecord) {
        let tasks = self.tasks(&op.tasks);
        self.push(op.node, op.stage, op.kind, tasks, op.start_s, op.end_s);
    }

    /// The `k`-th op in logging order, if there is one.
    pub fn get(&self, k: usize) -> Option<Op<'_>> {
        self.entries.get(k).map(|e| self.view(e))
    }

    /// Every op in logging order (the order the ops ended).
    pub fn iter(&self) -> OpIter<'_> {
        OpIter {
            log: self,
            entries: self.entries.iter(),
        }
    }

    /// The ops at positions `range` (clamped to the log).
    pub fn iter_range(&self, range: std::ops::Range<usize>) -> OpIter<'_> {
        let end = range.end.min(self.entries.len());
        let start = range.start.min(end);
        OpIter {
            log: self,
            entries: self.entries[start..end].iter(),
        }
    }

    /// Every op as an owned record (for tests that edit a timeline).
    pub fn to_records(&self) -> Vec<OpRecord> {
        self.iter().map(|op| op.to_record()).collect()
    }

    /// Appends another log's ops after this one's.
    pub fn append(&mut self, later: &OpLog) {
        for op in later {
            self.push_record(&op.to_record());
        }
        self.overflowed |= later.overflowed;
    }

    #[inline]
    fn view<'a>(&'a self, e: &'a LogEntry) -> Op<'a> {
        let tasks: &[TaskId] = match e.len() {
            0 => &[],
            1 => std::slice::from_ref(&e.tasks),
            _ => {
                let b = e.tasks.index();
                let start = if b == 0 { 0 } else { self.ends[b - 1] };
                &self.task_ids[start..self.ends[b]]
            }
        };
        Op {
            node: e.node(),
            stage: e.stage(),
            kind: e.kind(),
            tasks,
            start_s: e.start_s,
            end_s: e.end_s,
        }
    }
}

impl From<Vec<OpRecord>> for OpLog {
    fn from(records: Vec<OpRecord>) -> Self {
        let mut log = OpLog::new();
        for op in &records {
            log.push_record(op);
        }
        log
    }
}

/// The ops of an [`OpLog`] in log order.
pub struct OpIter<'a> {
    log: &'a OpLog,
    entries: std::slice::Iter<'a, LogEntry>,
}

impl<'a> Iterator for OpIter<'a> {
    type Item = Op<'a>;

    #[inline]
    fn next(&mut self) -> Option<Op<'a>> {
        self.entries.next().map(|e| self.log.view(e))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.entries.size_hint()
    }
}

impl ExactSizeIterator for OpIter<'_> {}

impl<'a> DoubleEndedIterator for OpIter<'a> {
    fn next_back(&mut self) -> Option<Op<'a>> {
        self.entries.next_back().map(|e| self.log.view(e))
    }
}

impl<'a> IntoIterator for &'a OpLog {
    type Item = Op<'a>;
    type IntoIter = OpIter<'a>;

    fn into_iter(self) -> OpIter<'a> {
        self.iter()
    }
}

/// Two logs are equal when they hold the same ops in the same order, however their task
/// lists are shared.
impl PartialEq for OpLog {
    fn eq(&self, other: &Self) -> bool {
        self.overflowed == other.overflowed
            && self.len() == other.len()
            && self.iter().zip(other.iter()).all(|(a, b)| a == b)
    }
}

#[cfg(test)]
#[path = "op_log_tests.rs"]
mod tests;
