//! The solver's two data structures: unassigned variables in a heap by activity, and every clause in one arena of words.

use super::*;

/// Unassigned variables by activity, most active on top.
#[derive(Default)]
pub(super) struct Heap {
    pub(super) heap: Vec<u32>,
    /// Each variable's place in `heap`, or `ABSENT`.
    pub(super) place: Vec<u32>,
}

pub(super) const ABSENT: u32 = u32::MAX;

impl Heap {
    pub(super) fn contains(&self, v: usize) -> bool {
        self.place[v] != ABSENT
    }

    pub(super) fn insert(&mut self, v: usize, activity: &[f64]) {
        if self.contains(v) {
            return;
        }
        self.place[v] = self.heap.len() as u32;
        self.heap.push(v as u32);
        self.up(self.heap.len() - 1, activity);
    }

    pub(super) fn pop(&mut self, activity: &[f64]) -> Option<usize> {
        let top = *self.heap.first()? as usize;
        let last = self.heap.pop()?;
        self.place[top] = ABSENT;
        if !self.heap.is_empty() {
            self.heap[0] = last;
            self.place[last as usize] = 0;
            self.down(0, activity);
        }
        Some(top)
    }

    /// After `v`'s activity grew.
    pub(super) fn raised(&mut self, v: usize, activity: &[f64]) {
        if self.contains(v) {
            self.up(self.place[v] as usize, activity);
        }
    }

    pub(super) fn up(&mut self, mut i: usize, activity: &[f64]) {
        let v = self.heap[i];
        while i > 0 {
            let parent = (i - 1) / 2;
            let p = self.heap[parent];
            if activity[p as usize] >= activity[v as usize] {
                break;
            }
            self.heap[i] = p;
            self.place[p as usize] = i as u32;
            i = parent;
        }
        self.heap[i] = v;
        self.place[v as usize] = i as u32;
    }

    pub(super) fn down(&mut self, mut i: usize, activity: &[f64]) {
        let v = self.heap[i];
        loop {
            let left = 2 * i + 1;
            if left >= self.heap.len() {
                break;
            }
            let right = left + 1;
            let child = if right < self.heap.len()
                && activity[self.heap[right] as usize] > activity[self.heap[left] as usize]
            {
                right
            } else {
                left
            };
            let c = self.heap[child];
            if activity[c as usize] <= activity[v as usize] {
                break;
            }
            self.heap[i] = c;
            self.place[c as usize] = i as u32;
            i = child;
        }
        self.heap[i] = v;
        self.place[v as usize] = i as u32;
    }
}

/// What minimization knows about a variable of a conflict's lower levels.
pub(super) const UNKNOWN: u8 = 0;
pub(super) const REMOVABLE: u8 = 1;
pub(super) const POISON: u8 = 2;

/// Every clause in one vector of words, referred to by the place of its
/// header: its length, its LBD with the learnt and deleted flags, and its
/// proof id (two words), then its literals. Propagation reads a clause
/// without following a pointer per clause.
#[derive(Default)]
pub(super) struct Arena {
    pub(super) words: Vec<u32>,
}

pub(super) const HEADER: usize = 4;
pub(super) const LEARNT: u32 = 1 << 31;
pub(super) const DELETED: u32 = 1 << 30;

impl Arena {
    pub(super) fn push(&mut self, lits: &[Lit], id: u64, learnt: bool, lbd: u32) -> u32 {
        let at = self.words.len() as u32;
        self.words.extend([lits.len() as u32, lbd.min(DELETED - 1) | if learnt { LEARNT } else { 0 }]);
        self.words.extend([id as u32, (id >> 32) as u32]);
        self.words.extend_from_slice(lits);
        at
    }

    pub(super) fn lits(&self, c: u32) -> &[Lit] {
        let c = c as usize;
        &self.words[c + HEADER..c + HEADER + self.words[c] as usize]
    }

    pub(super) fn lits_mut(&mut self, c: u32) -> &mut [Lit] {
        let c = c as usize;
        let len = self.words[c] as usize;
        &mut self.words[c + HEADER..c + HEADER + len]
    }

    pub(super) fn id(&self, c: u32) -> u64 {
        let c = c as usize;
        u64::from(self.words[c + 2]) | (u64::from(self.words[c + 3]) << 32)
    }

    pub(super) fn lbd(&self, c: u32) -> u32 {
        self.words[c as usize + 1] & (DELETED - 1)
    }

    pub(super) fn deleted(&self, c: u32) -> bool {
        self.words[c as usize + 1] & DELETED != 0
    }

    pub(super) fn delete(&mut self, c: u32) {
        self.words[c as usize + 1] |= DELETED;
    }

    /// Words a clause takes.
    pub(super) fn size(&self, c: u32) -> usize {
        HEADER + self.words[c as usize] as usize
    }
}
