fn main() {
    println!("klogscan: under construction");
}
