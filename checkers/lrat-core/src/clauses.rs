//! The active clauses by id: literals in one arena (`length, literals…`),
//! ids mapped to arena offsets in pages of 4,096 ids, a page freed when its
//! last clause is deleted. A lookup is two indexed loads; deleted clauses'
//! room is reclaimed by compacting the arena once it is mostly dead.

const PAGE: usize = 4096;

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
        if self.dead_words > (1 << 20) && self.dead_words * 2 > self.arena.len() {
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
