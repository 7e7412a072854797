#include "tuner/table/staleness.hpp"

#include <map>
#include <memory>
#include <set>

#include "runtime/backend/compile_candidate.hpp"
#include "runtime/backend/compiler_for.hpp"
#include "runtime/backend/elf_image.hpp"

namespace tunefuzz {

std::vector<TemplateChange> template_changes(const ResultsTable& table,
                                             const std::filesystem::path& template_directory,
                                             const KernelCache& cache) {
  std::map<std::string, KernelSource> sources;  // by file: the fp8 and tf32 families share gemm_wgmma.cu's
  std::map<std::string, TemplateChange> changes;
  for (const auto& [name, hash] : table.template_hashes) {
    const KernelTemplate& t =
        find_template(name, {table.file.string(), 0, 0, "provenance.template_hashes." + name});
    auto source = sources.find(t.source_file);
    if (source == sources.end())
      source = sources.emplace(t.source_file, KernelSource::load(template_directory, t.source_file)).first;
    if (source->second.hash() != hash) changes[name] = {name, hash, source->second.hash(), 0, {}};
  }
  if (changes.empty()) return {};
  std::unique_ptr<Compiler> compiler;
  std::string no_compiler;
  try {
    compiler = compiler_for(GpuSpec{table.gpu_name, table.gpu_arch, {}, {}, {}});
  } catch (const Error& e) {
    no_compiler = "cannot be compiled here to compare: " + e.message();
  }
  std::set<std::string> seen;
  for (const TableRow& row : table.rows) {
    if (!row.winner || !seen.insert(row.winner->id).second) continue;
    const auto change = changes.find(row.winner->template_name);
    if (change == changes.end()) continue;
    TemplateChange& c = change->second;
    ++c.winners;
    std::string why = no_compiler;
    if (why.empty()) {
      const Candidate candidate = parse_candidate_id(row.winner->id);
      const KernelSource& source = sources.at(candidate.kernel_template->source_file);
      try {
        why = code_difference(row.winner->code_sha256,
                              compile_candidate(candidate, table.gpu_arch, source, *compiler, cache).image);
      } catch (const Error& e) {
        why = "the tree does not compile it: " + e.message();
      }
    }
    if (!why.empty()) c.changed.push_back(row.winner->id + ": " + why);
  }
  std::vector<TemplateChange> out;
  for (auto& [name, c] : changes) out.push_back(std::move(c));
  return out;
}

}  // namespace tunefuzz
