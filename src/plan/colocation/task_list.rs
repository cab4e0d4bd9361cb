//! The tasks of one op, held inline when they are few.

use serde::Serialize;

use super::task::TaskId;

/// The tasks of one op, read as a slice. A run logs millions of ops (a decode iteration per
/// token and stage), nearly all of one or two tasks: up to `TaskList::INLINE` are held in the
/// record itself, so logging and dropping an op allocates nothing; longer lists are boxed.
#[derive(Clone)]
pub struct TaskList(TaskListRepr);

#[derive(Clone)]
enum TaskListRepr {
    Inline {
        len: u8,
        ids: [TaskId; TaskList::INLINE],
    },
    Boxed(Box<[TaskId]>),
}

impl TaskList {
    /// Tasks held without an allocation (the record stays 64 bytes).
    pub const INLINE: usize = 5;

    /// An empty list.
    pub fn new() -> Self {
        Self::from_slice(&[])
    }

    /// A list holding `ids`, inline when there are at most [`TaskList::INLINE`].
    pub fn from_slice(ids: &[TaskId]) -> Self {
        match u8::try_from(ids.len()) {
            Ok(len) if ids.len() <= Self::INLINE => {
                let mut inline = [TaskId(0); Self::INLINE];
                inline[..ids.len()].copy_from_slice(ids);
                TaskList(TaskListRepr::Inline { len, ids: inline })
            }
            _ => TaskList(TaskListRepr::Boxed(ids.into())),
        }
    }

    /// The tasks, in the order given.
    pub fn as_slice(&self) -> &[TaskId] {
        match &self.0 {
            TaskListRepr::Inline { len, ids } => &ids[..usize::from(*len)],
            TaskListRepr::Boxed(ids) => ids,
        }
    }
}

impl Default for TaskList {
    fn default() -> Self {
        Self::new()
    }
}

impl std::ops::Deref for TaskList {
    type Target = [TaskId];

    fn deref(&self) -> &[TaskId] {
        self.as_slice()
    }
}

impl<'a> IntoIterator for &'a TaskList {
    type Item = &'a TaskId;
    type IntoIter = std::slice::Iter<'a, TaskId>;

    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl From<Vec<TaskId>> for TaskList {
    fn from(ids: Vec<TaskId>) -> Self {
        if ids.len() <= Self::INLINE {
            Self::from_slice(&ids)
        } else {
            TaskList(TaskListRepr::Boxed(ids.into_boxed_slice()))
        }
    }
}

impl PartialEq for TaskList {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

/// As a list (`[TaskId(3)]`), like the `Vec` it replaces.
impl std::fmt::Debug for TaskList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_slice().fmt(f)
    }
}

/// As a sequence, like the `Vec` it replaces.
impl Serialize for TaskList {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.as_slice().serialize(serializer)
    }
}
