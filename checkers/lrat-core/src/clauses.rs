//! The active clauses by id: literals in one arena (`length, literals…`),
//! ids mapped to arena offsets in pages of 4,096 ids, a page freed when its
//! last clause is deleted. A lookup is two indexed loads; deleted clauses'
//! room is reclaimed by compacting the arena once it is mostly dead.

const PAGE: usize = 4096;
/// Dead words before the arena is compacted (few in tests, so they compact).
const COMPACT_AFTER: usize = if cfg!(test) { 8 } else { 1 << 20 };

#[derive(Default)]
pub(crate) struct Clauses {
    arena: Vec<i32>,
    pages: Vec<Option<Page>>,
    dead_words: usize,
}

struct Page {
    /// Arena offset + 1 of each id's clause; 0 for none.
    slots: Box<[u32]>,
    live: u32,
}

impl Clauses {
    /// Add clause `id` (not active: ids only increase).
    pub(crate) fn insert(&mut self, id: u64, literals: &[i32]) {
        let (page, slot) = ((id as usize) / PAGE, (id as usize) % PAGE);
        if page >= self.pages.len() {
            self.pages.resize_with(page + 1, || None);
        }
        let page = self.pages[page].get_or_insert_with(|| Page { slots: vec![0; PAGE].into_boxed_slice(), live: 0 });
        if page.slots[slot] != 0 {
            return;
        }
        let offset = self.arena.len();
        self.arena.push(literals.len() as i32);
        self.arena.extend_from_slice(literals);
        page.slots[slot] = offset as u32 + 1;
        page.live += 1;
    }

    /// The literals of active clause `id`.
    #[inline]
    pub(crate) fn get(&self, id: i64) -> Option<&[i32]> {
        let id = usize::try_from(id).ok()?;
        let page = self.pages.get(id / PAGE)?.as_ref()?;
        let offset = page.slots[id % PAGE].checked_sub(1)? as usize;
        let length = self.arena[offset] as usize;
        Some(&self.arena[offset + 1..offset + 1 + length])
    }

    /// Delete active clause `id`; false if it is not active.
    pub(crate) fn remove(&mut self, id: i64) -> bool {
        let Some(length) = self.get(id).map(<[i32]>::len) else { return false };
        let (index, slot) = (id as usize / PAGE, id as usize % PAGE);
        let Some(page) = self.pages[index].as_mut() else { return false };
        page.slots[slot] = 0;
        page.live -= 1;
        if page.live == 0 {
            self.pages[index] = None;
        }
        self.dead_words += length + 1;
        if self.dead_words > COMPACT_AFTER && self.dead_words * 2 > self.arena.len() {
            self.compact();
        }
        true
    }

    /// Every active clause in id order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u64, &[i32])> {
        self.pages.iter().enumerate().filter_map(|(p, page)| Some((p, page.as_ref()?))).flat_map(move |(p, page)| {
            page.slots.iter().enumerate().filter(|(_, s)| **s != 0).map(move |(i, s)| {
                let offset = *s as usize - 1;
                let length = self.arena[offset] as usize;
                ((p * PAGE + i) as u64, &self.arena[offset + 1..offset + 1 + length])
            })
        })
    }

    /// Move the live clauses to the front of the arena, in id order.
    fn compact(&mut self) {
        let mut arena = Vec::with_capacity(self.arena.len() - self.dead_words);
        for page in self.pages.iter_mut().flatten() {
            for slot in page.slots.iter_mut().filter(|s| **s != 0) {
                let offset = *slot as usize - 1;
                let length = self.arena[offset] as usize;
                *slot = arena.len() as u32 + 1;
                arena.extend_from_slice(&self.arena[offset..offset + 1 + length]);
            }
        }
        self.arena = arena;
        self.dead_words = 0;
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::{COMPACT_AFTER, Clauses, PAGE};

    /// Only the active clauses are held: a stream of clauses, each deleted
    /// a few steps after it was added, keeps the arena within twice the
    /// live words (plus the compaction threshold) and frees every page whose
    /// clauses are all gone.
    #[test]
    fn deleted_clauses_give_their_room_back() {
        let mut store = Clauses::default();
        let mut live = std::collections::VecDeque::new();
        for id in 1..=(12 * PAGE) as u64 {
            store.insert(id, &[1, -2, 3]);
            live.push_back(id);
            if live.len() > 10 {
                assert!(store.remove(live.pop_front().unwrap() as i64));
            }
            let live_words = live.len() * 4;
            assert!(store.arena.len() <= 2 * live_words + COMPACT_AFTER + 4, "{} words at id {id}", store.arena.len());
            assert!(store.pages.iter().flatten().count() <= 2, "pages held at id {id}");
        }
        for id in live {
            assert!(store.remove(id as i64));
        }
        assert_eq!(store.pages.iter().flatten().count(), 0, "every page freed");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Inserts (ids rising across pages), removals (of present and absent
        /// ids) and the compactions they cause: after every one, each id reads
        /// back what a map holds, and the active clauses are listed in id order.
        #[test]
        fn the_store_reads_like_a_map_through_removals_and_compactions(
            steps in prop::collection::vec((0u8..4, 0u64..3 * PAGE as u64, prop::collection::vec(-9i32..9, 0..5)), 1..120)
        ) {
            let (mut store, mut model) = (Clauses::default(), BTreeMap::<u64, Vec<i32>>::new());
            let mut next = 1u64;
            for (kind, jump, literals) in steps {
                if kind == 0 {
                    let id = *model.keys().nth(jump as usize % model.len().max(1)).unwrap_or(&0);
                    prop_assert_eq!(store.remove(id as i64), model.remove(&id).is_some());
                } else if kind == 1 {
                    prop_assert_eq!(store.remove((next + 1 + jump) as i64), false);
                } else {
                    next += 1 + jump % 5 + if kind == 3 { jump } else { 0 };
                    store.insert(next, &literals);
                    model.insert(next, literals);
                }
                for (&id, clause) in &model {
                    prop_assert_eq!(store.get(id as i64), Some(clause.as_slice()));
                }
                let listed: Vec<(u64, Vec<i32>)> = store.iter().map(|(id, c)| (id, c.to_vec())).collect();
                let expected: Vec<(u64, Vec<i32>)> = model.iter().map(|(id, c)| (*id, c.clone())).collect();
                prop_assert_eq!(listed, expected);
                prop_assert_eq!(store.get(-1), None);
            }
        }
    }
}
