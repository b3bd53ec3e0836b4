//! Probes a GGUF relevance judge by hand: `relevance_probe MODEL.gguf QUERY PASSAGE...` prints
//! each passage's probability of "yes" and the time it took; `relevance_probe --generate
//! MODEL.gguf PROMPT...` prints the model's greedy answer to each prompt.
fn main() -> anyhow::Result<()> {
    use quarry_llm::RelevanceScorer;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [model, query, passages @ ..] = args.as_slice() else {
        anyhow::bail!("usage: relevance_probe MODEL.gguf QUERY PASSAGE...");
    };
    if model == "--generate" {
        let judge = quarry_llm::GgufRelevanceModel::load(std::path::Path::new(query))?;
        for prompt in passages {
            let prompt = format!("<|im_start|>user\n{prompt}<|im_end|>\n<|im_start|>assistant\n");
            println!("{}", judge.continue_greedily(&prompt, 40)?);
        }
        return Ok(());
    }
    let started = std::time::Instant::now();
    let judge = quarry_llm::GgufRelevanceModel::load(std::path::Path::new(model))?;
    eprintln!("loaded in {:?}", started.elapsed());
    for passage in passages {
        let started = std::time::Instant::now();
        let p = judge.relevance(query, passage)?;
        println!(
            "{p:.4}\t{:?}\t{}",
            started.elapsed(),
            passage.chars().take(60).collect::<String>()
        );
    }
    Ok(())
}
