// sym_rust.rs -- a Rust program for the symbolization tests, built with
// `rustc -O -g`: allocations through Vec growth (RawVec), Box, String and
// HashMap, format! (<String as fmt::Write>::write_fmt) and <str>::repeat,
// from user functions in a module, a generic one included.  Every
// block is leaked so it stays in the final snapshot.  User code is
// mangled the legacy way, the standard library the v0 way.
use std::collections::HashMap;

mod work {
    use std::collections::HashMap;

    #[inline(never)]
    pub fn grow_vec(n: usize) -> Vec<u64> {
        let mut v = Vec::new();
        for i in 0..n {
            v.push(i as u64 * 3);
        }
        v
    }

    #[inline(never)]
    pub fn boxed<T: Clone>(x: T, n: usize) -> Vec<Box<T>> {
        (0..n).map(|_| Box::new(x.clone())).collect()
    }

    #[inline(never)]
    pub fn build_string(n: usize) -> String {
        let mut s = String::new();
        for i in 0..n {
            s.push_str(&i.to_string());
        }
        s
    }

    #[inline(never)]
    pub fn format_lines(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("line {} of {}", i, n)).collect()
    }

    #[inline(never)]
    pub fn repeat_str(n: usize) -> String {
        "ab".repeat(n)
    }

    #[inline(never)]
    pub fn fill_map(n: usize) -> HashMap<u64, u64> {
        let mut m = HashMap::new();
        for i in 0..n as u64 {
            m.insert(i, i * i);
        }
        m
    }
}

fn main() {
    let n = std::env::args().count() + 999;
    let v = work::grow_vec(n);
    let b = work::boxed([7u8; 48], 10);
    let s = work::build_string(n);
    let m: HashMap<u64, u64> = work::fill_map(n);
    let f = work::format_lines(n);
    let r = work::repeat_str(n);
    println!("{} {} {} {} {} {}", v.len(), b.len(), s.len(), m.len(), f.len(), r.len());
    std::mem::forget(v);
    std::mem::forget(b);
    std::mem::forget(s);
    std::mem::forget(m);
    std::mem::forget(f);
    std::mem::forget(r);
}
