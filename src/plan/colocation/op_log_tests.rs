use super::*;
use crate::plan::colocation::task::TaskId;

fn record(node: usize, stage: usize, kind: OpKind, ids: &[u32], start_s: f64) -> OpRecord {
    OpRecord {
        node,
        stage,
        kind,
        tasks: ids.iter().map(|&i| TaskId(i)).collect::<Vec<_>>().into(),
        start_s,
        end_s: start_s + 1.0,
    }
}

#[test]
fn the_log_reads_back_what_was_logged_in_order() {
    let records = vec![
        record(3, 1, OpKind::Forward, &[7], 0.0),
        record(0, 0, OpKind::Decode, &[1, 2, 9], 1.0),
        record(2, 0, OpKind::Sync, &[], 2.0),
        record(0, 1, OpKind::Reload, &[4, 5], 3.0),
    ];
    let log = OpLog::from(records.clone());
    assert_eq!(log.len(), 4);
    assert_eq!(log.to_records(), records);
    assert_eq!(
        log.get(1).map(|o| o.tasks.to_vec()),
        Some(vec![TaskId(1), TaskId(2), TaskId(9)])
    );
    assert!(log.get(4).is_none());
    assert_eq!(log.iter().next_back().map(|o| o.kind), Some(OpKind::Reload));
}

#[test]
fn kinds_are_stored_by_their_discriminant() {
    for (i, kind) in KINDS.iter().enumerate() {
        assert_eq!(*kind as usize, i);
        let mut log = OpLog::new();
        log.push(3, 2, *kind, LoggedTasks::default(), 0.0, 1.0);
        assert_eq!(
            log.get(0).map(|o| (o.kind, o.node, o.stage)),
            Some((*kind, 3, 2))
        );
    }
}

#[test]
fn ops_share_one_stored_list() {
    let mut log = OpLog::new();
    let batch = log.tasks(&[TaskId(1), TaskId(2)]);
    log.push(0, 0, OpKind::Decode, batch, 0.0, 1.0);
    log.push(0, 1, OpKind::Decode, batch, 1.0, 2.0);
    let other = log.tasks(&[TaskId(3), TaskId(4), TaskId(5)]);
    log.push(1, 0, OpKind::Decode, other, 0.0, 1.0);
    assert_eq!(log.task_ids.len(), 5);
    let tasks: Vec<Vec<u32>> = log
        .iter()
        .map(|o| o.tasks.iter().map(|t| t.0).collect())
        .collect();
    assert_eq!(tasks, vec![vec![1, 2], vec![1, 2], vec![3, 4, 5]]);
    // Appending re-stores the later log's lists after this one's.
    let mut first = OpLog::from(vec![record(0, 0, OpKind::Reload, &[8, 9], 0.0)]);
    first.append(&log);
    assert_eq!(first.len(), 4);
    assert_eq!(first.to_records()[1..], log.to_records()[..]);
}

#[test]
fn an_op_that_does_not_fit_marks_the_log_overflowed() {
    let mut log = OpLog::new();
    log.push_record(&record(0, 3_000, OpKind::Decode, &[1], 0.0));
    assert!(log.overflowed());
    assert!(log.is_empty());
    assert_ne!(log, OpLog::new());
}
