//! Stack interning against a model: every distinct stack gets one id, the
//! same stack always the same id (whichever thread's path interned it and
//! across a release of the index), and each id reads back as its stack,
//! its parent being the stack without its leaf.

use std::collections::HashMap;

use profile::collect::{Interner, Loc, Origin, StackPath, EMPTY_STACK};

fn loc(ip: u64) -> Loc {
    Loc {
        ip,
        rel: ip,
        dso: 0,
        level: b'.',
        origin: Origin::Return,
        map_size: 0,
    }
}

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// A random leaf-first stack: a root-first walk through a tree of fanout
/// `fanout`, `depth` deep, so stacks share their root-most parts.
fn random_stack(rng: &mut Rng, fanout: u64, max_depth: u64) -> Vec<Loc> {
    let depth = rng.below(max_depth + 1);
    let mut root_first = Vec::new();
    let mut at = 1u64;
    for _ in 0..depth {
        at = at * fanout + rng.below(fanout);
        root_first.push(loc(at));
    }
    root_first.reverse();
    root_first
}

fn check(interner: &Interner, id: u32, stack: &[Loc]) {
    let mut ids = Vec::new();
    interner.stack(id, &mut ids);
    let locs: Vec<Loc> = ids.iter().map(|&l| interner.locs()[l as usize]).collect();
    assert_eq!(locs, stack, "stack {id} reads back as another stack");
    match interner.node(id) {
        None => assert!(stack.is_empty()),
        Some((parent, leaf)) => {
            assert_eq!(interner.locs()[leaf as usize], stack[0]);
            let mut up = Vec::new();
            interner.stack(parent, &mut up);
            assert_eq!(up.len() + 1, stack.len());
            if stack.len() == 1 {
                assert_eq!(parent, EMPTY_STACK);
            }
        }
    }
}

#[test]
fn every_distinct_stack_has_one_id() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut interner = Interner::default();
    let mut model: HashMap<Vec<Loc>, u32> = HashMap::new();
    let mut paths: Vec<StackPath> = vec![StackPath::default(); 4];
    for round in 0..40_000 {
        if round == 25_000 {
            // Pass one ends; a live view interns more afterwards.
            interner.release_index();
        }
        let stack = random_stack(&mut rng, 3, 12);
        let thread = rng.below(4) as usize;
        // Now and then a thread's stack repeats with only its leaf
        // changed, the common case the path is for.
        let id = interner.stack_id_from(&stack, &mut paths[thread]);
        match model.get(&stack) {
            Some(&known) => assert_eq!(id, known, "{stack:?} got a second id"),
            None => {
                assert!(
                    stack.is_empty() || !model.values().any(|&v| v == id),
                    "two stacks share id {id}"
                );
                model.insert(stack.clone(), id);
            }
        }
        if round % 97 == 0 {
            check(&interner, id, &stack);
        }
        if !stack.is_empty() && rng.below(2) == 0 {
            let mut sibling = stack.clone();
            sibling[0] = loc(stack[0].ip ^ 0x1_0000);
            let id2 = interner.stack_id_from(&sibling, &mut paths[thread]);
            let known = *model.entry(sibling.clone()).or_insert(id2);
            assert_eq!(id2, known);
            check(&interner, id2, &sibling);
        }
    }
    // Every stack reads back, whatever path made it.
    for (stack, &id) in &model {
        check(&interner, id, stack);
        assert_eq!(interner.stack_id(stack), id);
    }
    // One node per distinct non-empty prefix.
    let mut prefixes = std::collections::HashSet::new();
    for stack in model.keys() {
        for k in 1..=stack.len() {
            prefixes.insert(stack[stack.len() - k..].to_vec());
        }
    }
    assert_eq!(interner.stack_nodes(), prefixes.len());
}

#[test]
fn the_empty_stack_is_no_node() {
    let mut interner = Interner::default();
    assert_eq!(interner.stack_id(&[]), EMPTY_STACK);
    let mut path = StackPath::default();
    let a = interner.stack_id_from(&[loc(1)], &mut path);
    assert_eq!(interner.stack_id_from(&[], &mut path), EMPTY_STACK);
    assert_eq!(interner.stack_id_from(&[loc(1)], &mut path), a);
    assert_eq!(interner.stack_nodes(), 1);
}

/// Past a million stack nodes the index is split into tables that grow one
/// at a time: every stack interned before and after the split keeps its id.
#[test]
fn a_big_index_keeps_every_stack_across_its_split() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut interner = Interner::default();
    let mut path = StackPath::default();
    let mut stacks = Vec::new();
    let mut ids = Vec::new();
    // Eight deep with a wide fanout: nearly every prefix is new.
    while interner.stack_nodes() < 900_000 {
        let root_first: Vec<Loc> = (0..8).map(|_| loc(rng.below(1 << 40))).collect();
        let mut stack = root_first;
        stack.reverse();
        ids.push(interner.stack_id_from(&stack, &mut path));
        stacks.push(stack);
    }
    let nodes = interner.stack_nodes();
    for (k, (stack, &id)) in stacks.iter().zip(&ids).enumerate() {
        assert_eq!(interner.stack_id_from(stack, &mut path), id, "stack {k}");
        if k % 1009 == 0 {
            check(&interner, id, stack);
        }
    }
    assert_eq!(interner.stack_nodes(), nodes, "a known stack made nodes");
    // Stacks sharing a known stack's root-most part extend it.
    let mut longer = stacks[7].clone();
    longer.insert(0, loc(1 << 41));
    let id = interner.stack_id_from(&longer, &mut path);
    assert_eq!(interner.node(id).map(|n| n.0), Some(ids[7]));
    assert_eq!(interner.stack_nodes(), nodes + 1);
}
