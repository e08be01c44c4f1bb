//! The `sticky` task assignor of streams groups (Kafka's
//! `streams.assignor.StickyTaskAssignor`): active tasks balanced over the members (within
//! one task of each other), each member keeping the active tasks its previous target gave
//! it as far as that balance allows, then a task another member had as standby (its state
//! is there), then the least loaded member; standby replicas on members of other processes
//! than the task's active one (never two of a task in one process), sticky likewise.
//! Members and tasks in id order, so the result is the same for the same input. Kafka's
//! exact tie-breaking (its process-level loads and rack awareness) is not copied: the
//! balance and stickiness are what a client observes.

use crate::streams_groups::{TaskTuple, Tasks};
use std::collections::{BTreeMap, BTreeSet};

/// A member as the assignor sees it.
#[derive(Debug, Clone, Copy)]
pub struct Member<'a> {
    /// Its id.
    pub id: &'a str,
    /// Its process.
    pub process_id: &'a str,
    /// Its previous target.
    pub previous: Option<&'a TaskTuple>,
}

fn has(tasks: &Tasks, sub: &str, partition: i32) -> bool {
    tasks.get(sub).is_some_and(|set| set.contains(&partition))
}

fn give(tasks: &mut Tasks, sub: &str, partition: i32) {
    tasks.entry(sub.to_owned()).or_default().insert(partition);
}

/// Each member's target: `tasks` is each subtopology's task count.
pub fn assign(
    members: &[Member<'_>],
    tasks: &BTreeMap<String, i32>,
    standby_replicas: usize,
) -> BTreeMap<String, TaskTuple> {
    let mut targets: BTreeMap<String, TaskTuple> = members
        .iter()
        .map(|m| (m.id.to_owned(), TaskTuple::default()))
        .collect();
    if members.is_empty() {
        return targets;
    }
    let all: Vec<(&str, i32)> = tasks
        .iter()
        .flat_map(|(sub, count)| (0..*count).map(move |p| (sub.as_str(), p)))
        .collect();
    let n = members.len();
    let min_quota = all.len() / n;
    let mut over_quota_slots = all.len() % n;
    let mut load: Vec<usize> = vec![0; n];
    let mut owner: BTreeMap<(&str, i32), usize> = BTreeMap::new();
    // May member `at` take one more active task?
    let room = |load: &[usize], over: usize, at: usize| {
        load[at] < min_quota || (load[at] == min_quota && over > 0)
    };
    let take = |load: &mut Vec<usize>, over: &mut usize, at: usize| {
        if load[at] == min_quota {
            *over = over.saturating_sub(1);
        }
        load[at] += 1;
    };
    // Sticky: previous active owners first, then previous standby holders.
    for pick_standby in [false, true] {
        for &(sub, partition) in &all {
            if owner.contains_key(&(sub, partition)) {
                continue;
            }
            let previous = members.iter().position(|m| {
                m.previous.is_some_and(|prev| {
                    let held = if pick_standby {
                        &prev.standby
                    } else {
                        &prev.active
                    };
                    has(held, sub, partition)
                })
            });
            if let Some(at) = previous.filter(|at| room(&load, over_quota_slots, *at)) {
                take(&mut load, &mut over_quota_slots, at);
                owner.insert((sub, partition), at);
            }
        }
    }
    // The rest, each to the least loaded member with room (ties: member-id order).
    for &(sub, partition) in &all {
        if owner.contains_key(&(sub, partition)) {
            continue;
        }
        let at = (0..n)
            .filter(|at| room(&load, over_quota_slots, *at))
            .min_by_key(|at| (load[*at], members[*at].id))
            .unwrap_or_else(|| {
                (0..n)
                    .min_by_key(|at| (load[*at], members[*at].id))
                    .expect("members is not empty")
            });
        take(&mut load, &mut over_quota_slots, at);
        owner.insert((sub, partition), at);
    }
    for (&(sub, partition), &at) in &owner {
        give(
            &mut targets
                .get_mut(members[at].id)
                .expect("a target each")
                .active,
            sub,
            partition,
        );
    }
    // Standby replicas: on other processes than the active task's, one per process.
    let mut standby_load: Vec<usize> = vec![0; n];
    for &(sub, partition) in &all {
        let active_process = members[owner[&(sub, partition)]].process_id;
        let mut processes: BTreeSet<&str> = BTreeSet::from([active_process]);
        for _ in 0..standby_replicas {
            let eligible = |at: &usize| !processes.contains(members[*at].process_id);
            let previous = (0..n).filter(eligible).find(|at| {
                members[*at]
                    .previous
                    .is_some_and(|prev| has(&prev.standby, sub, partition))
            });
            let Some(at) = previous.or_else(|| {
                (0..n)
                    .filter(eligible)
                    .min_by_key(|at| (standby_load[*at] + load[*at], members[*at].id))
            }) else {
                break;
            };
            processes.insert(members[at].process_id);
            standby_load[at] += 1;
            give(
                &mut targets
                    .get_mut(members[at].id)
                    .expect("a target each")
                    .standby,
                sub,
                partition,
            );
        }
    }
    targets
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(tasks: &Tasks) -> usize {
        tasks.values().map(BTreeSet::len).sum()
    }

    #[test]
    fn balances_active_tasks_and_keeps_what_it_can() {
        let tasks = BTreeMap::from([("0".to_string(), 4), ("1".to_string(), 3)]);
        let ids = ["a", "b", "c"];
        let members: Vec<Member<'_>> = ids
            .iter()
            .map(|id| Member {
                id,
                process_id: id,
                previous: None,
            })
            .collect();
        let first = assign(&members, &tasks, 0);
        let sizes: Vec<usize> = first.values().map(|t| count(&t.active)).collect();
        assert_eq!(sizes.iter().sum::<usize>(), 7);
        assert!(sizes.iter().all(|n| *n == 2 || *n == 3), "{sizes:?}");
        // One leaves: the others keep all they had.
        let rest: Vec<Member<'_>> = ["a", "c"]
            .iter()
            .map(|id| Member {
                id,
                process_id: id,
                previous: first.get(*id),
            })
            .collect();
        let second = assign(&rest, &tasks, 0);
        for id in ["a", "c"] {
            for (sub, set) in &first[id].active {
                assert!(second[id].active[sub].is_superset(set), "{id} lost a task");
            }
        }
        let sizes: Vec<usize> = second.values().map(|t| count(&t.active)).collect();
        assert_eq!(sizes.iter().sum::<usize>(), 7);
        assert!(sizes.iter().all(|n| *n == 3 || *n == 4), "{sizes:?}");
    }

    #[test]
    fn standby_replicas_go_to_other_processes() {
        let tasks = BTreeMap::from([("0".to_string(), 2)]);
        let members = [
            Member {
                id: "a1",
                process_id: "p1",
                previous: None,
            },
            Member {
                id: "a2",
                process_id: "p1",
                previous: None,
            },
            Member {
                id: "b1",
                process_id: "p2",
                previous: None,
            },
        ];
        let targets = assign(&members, &tasks, 1);
        for partition in 0..2 {
            let active: Vec<&str> = members
                .iter()
                .filter(|m| has(&targets[m.id].active, "0", partition))
                .map(|m| m.process_id)
                .collect();
            let standby: Vec<&str> = members
                .iter()
                .filter(|m| has(&targets[m.id].standby, "0", partition))
                .map(|m| m.process_id)
                .collect();
            assert_eq!(active.len(), 1);
            assert_eq!(standby.len(), 1, "one standby of task 0_{partition}");
            assert_ne!(active[0], standby[0], "standby on another process");
        }
        // With one process only, there is nowhere to put a standby.
        let alone = assign(&members[..2], &tasks, 1);
        assert!(alone.values().all(|t| t.standby.is_empty()));
    }
}
