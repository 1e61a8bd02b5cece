// names_rust.rs -- a Rust target whose allocation sites are generic
// (Bag<T>::push_many, make::<u64>), closures (main::{{closure}}) and trait
// impls (<String as Clone>::clone: the name pprof's own shortening cut to
// "::clone").  Every block is leaked (mem::forget).  Built by
// check_pprof_names.py with rustc -g -C opt-level=0.
use std::collections::HashMap;

struct Bag<T> {
    items: Vec<T>,
}

impl<T: Clone> Bag<T> {
    #[inline(never)]
    fn push_many(&mut self, t: &T, n: usize) {
        for _ in 0..n {
            self.items.push(t.clone());
        }
    }
}

#[inline(never)]
fn make<T: Default + Clone>(n: usize) -> Vec<T> {
    vec![T::default(); n]
}

fn main() {
    let mut b: Bag<String> = Bag { items: Vec::new() };
    b.push_many(&"hello".repeat(10), 100);
    let v: Vec<u64> = make::<u64>(1000);
    let m: HashMap<u32, Vec<u8>> = (0..100u32).map(|i| (i, vec![i as u8; 64])).collect();
    println!("{} {} {}", b.items.len(), v.len(), m.len());
    std::mem::forget(b); // leaked, so that they are live at exit
    std::mem::forget(v);
    std::mem::forget(m);
}
