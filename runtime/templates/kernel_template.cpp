#include "runtime/templates/kernel_template.hpp"

#include <algorithm>
#include <set>
#include <charconv>

#include "runtime/templates/gemm_mma.hpp"
#include "runtime/templates/gemm_simt.hpp"
#include "runtime/templates/gemm_skinny.hpp"
#include "runtime/templates/gemm_wgmma.hpp"

namespace tunefuzz {

int64_t Point::operator[](std::string_view name) const {
  for (const auto& [key, value] : values_)
    if (key == name) return value;
  throw Error(ErrorKind::internal, "point has no parameter '" + std::string(name) + "'");
}

std::string Point::str() const {
  std::string out;
  for (const auto& [key, value] : values_) {
    if (!out.empty()) out += ',';
    out += key + "=" + std::to_string(value);
  }
  return out;
}

const ParameterDecl* KernelTemplate::parameter(std::string_view parameter_name) const {
  for (const auto& decl : parameters)
    if (decl.name == parameter_name) return &decl;
  return nullptr;
}

std::vector<Define> KernelTemplate::defines(const Point& point, TypePair types, int mutant,
                                            int64_t perturb) const {
  std::vector<Define> out;
  for (const auto& decl : parameters)
    if (decl.compile_time) out.push_back({decl.name, point[decl.name]});
  out.push_back({"TF_INPUT", template_code(types.input)});
  out.push_back({"TF_OUTPUT", template_code(types.output)});
  if (mutant != 0) out.push_back({"TF_MUTANT", mutant});
  if (perturb != 0) out.push_back({"TF_PERTURB", perturb});
  return out;
}

Point KernelTemplate::default_point() const {
  std::vector<std::pair<std::string, int64_t>> values;
  for (const auto& decl : parameters) values.emplace_back(decl.name, decl.default_value);
  return Point(std::move(values));
}

GemmShape shape_of(const Problem& p) {
  GemmShape s;
  s.m = p.m;
  s.n = p.n;
  s.k = p.k;
  s.lda = p.layout.a == Order::row ? p.k : p.m;
  s.ldb = p.layout.b == Order::row ? p.n : p.k;
  s.ldc = p.n;
  s.layout = p.layout;
  return s;
}

std::string Candidate::id() const {
  std::string out = kernel_template->name + "/" + to_string(types.input) + "-" + to_string(types.output) +
                    "/" + point.str();
  if (mutant != 0) out += "/mutant=" + std::to_string(mutant);
  if (perturb != 0) out += "/perturb=" + std::to_string(perturb);
  return out;
}

Candidate Candidate::unperturbed() const {
  Candidate out = *this;
  out.perturb = 0;
  return out;
}

std::string KernelTemplate::compile_arch(const std::string& gpu_arch, const SourceLocation& where) const {
  if (archs.empty() || std::find(archs.begin(), archs.end(), gpu_arch) != archs.end())
    return gpu_arch + arch_suffix;
  std::string list;
  for (const std::string& a : archs) list += (list.empty() ? "" : ", ") + a;
  throw Error(ErrorKind::bad_input,
              "template " + name + " runs on " + list + " only, and this config targets " + gpu_arch, where);
}

std::optional<LauncherKind> launcher_kind(const KernelTemplate& kernel_template) {
  static const std::vector<std::pair<std::string, LauncherKind>> by_source = {
      {"gemm_mma.cu", LauncherKind::gemm_mma},
      {"gemm_simt.cu", LauncherKind::gemm_simt},
      {"gemm_skinny.cu", LauncherKind::gemm_skinny},
      {"gemm_wgmma.cu", LauncherKind::gemm_wgmma},
  };
  for (const auto& [source, kind] : by_source)
    if (source == kernel_template.source_file) return kind;
  return std::nullopt;
}

namespace {

int64_t round_up_16(int64_t x) {
  return (std::max<int64_t>(x, 1) + 15) / 16 * 16;
}

Order flipped(Order o) {
  return o == Order::row ? Order::col : Order::row;
}

/// A 1×K column-major A with lda = 1, or a K×1 row-major B with ldb = 1, relabelled in the order that reads
/// it along K (the same bytes: the one row or column is contiguous either way).
void read_along_k(GemmShape& s) {
  if (s.m == 1 && s.layout.a == Order::col && s.lda == 1) {
    s.layout.a = Order::row;
    s.lda = round_up_16(s.k);
  }
  if (s.n == 1 && s.layout.b == Order::row && s.ldb == 1) {
    s.layout.b = Order::col;
    s.ldb = round_up_16(s.k);
  }
}

}  // namespace

GemmForm canonical_form(const GemmShape& shape) {
  GemmForm form{shape, false};
  GemmShape& s = form.shape;
  if (s.m <= 0 || s.n <= 0 || s.k <= 0) return form;  // a quick return: nothing to rewrite
  read_along_k(s);
  if (s.n == 1 && s.m > 1 && s.ldc == 1) {
    // Cᵀ (1×M, row-major) = Bᵀ (1×K) · Aᵀ (K×M): a transposed operand is the same bytes in the other order.
    GemmShape t = s;
    t.m = s.n;
    t.n = s.m;
    t.layout = Layout{flipped(s.layout.b), flipped(s.layout.a)};
    t.lda = s.ldb;
    t.ldb = s.lda;
    t.ldc = round_up_16(s.m);
    t.a_alignment = s.b_alignment;
    t.b_alignment = s.a_alignment;
    s = t;
    form.swapped = true;
    read_along_k(s);
  }
  return form;
}

GemmForm transposed_form(const GemmShape& shape) {
  GemmForm form{shape, false};
  if (shape.c_order == Order::col) return form;
  GemmShape s = shape;
  read_along_k(s);
  GemmShape& t = form.shape;
  t = s;
  t.m = s.n;
  t.n = s.m;
  t.layout = Layout{flipped(s.layout.b), flipped(s.layout.a)};
  t.lda = s.ldb;
  t.ldb = s.lda;
  t.a_alignment = s.b_alignment;
  t.b_alignment = s.a_alignment;
  t.c_order = Order::col;  // the same ldc: row i of C is column i of Cᵀ
  form.swapped = true;
  return form;
}

std::string describe_form(const GemmShape& shape, const GemmForm& form) {
  if (form.shape == shape) return "";
  const GemmShape& s = form.shape;
  return std::string(form.swapped ? "as Cᵀ = Bᵀ·Aᵀ: " : "as ") + std::to_string(s.m) + "×" +
         std::to_string(s.n) + "×" + std::to_string(s.k) + " " + to_string(s.layout) +
         (s.c_order == Order::col ? ", C stored transposed" : "");
}

namespace {
bool swaps(const KernelTemplate& t, const Point& point) {
  return t.swaps_operands && t.swaps_operands(point);
}
}  // namespace

GemmForm launch_form(const KernelTemplate& kernel_template, const Point& point, const GemmShape& shape) {
  // A quick return touches C alone, as stated (tf_scale_c walks a row-major C).
  if (swaps(kernel_template, point))
    return quick_return(shape) == QuickReturn::none ? transposed_form(shape) : GemmForm{shape, false};
  GemmForm form = canonical_form(shape);
  // (refusal on a canonical shape is the kernel's own: the canonical form of a canonical shape is itself)
  if (form.shape == shape || kernel_template.refusal(point, form.shape)) return GemmForm{shape, false};
  return form;
}

OutputTile stated_tile(const KernelTemplate& kernel_template, const Point& point) {
  const int64_t bm = point["BM"], bn = point["BN"];
  return swaps(kernel_template, point) ? OutputTile{bn, bm} : OutputTile{bm, bn};
}

void serve_canonical_forms(KernelTemplate& t) {
  auto own_refusal = t.refusal;
  auto own_geometry = t.geometry;
  auto swaps_operands = t.swaps_operands;
  const auto swapping = [swaps_operands](const Point& p) { return swaps_operands && swaps_operands(p); };
  t.refusal = [own_refusal, swapping](const Point& p, const GemmShape& s) -> std::optional<std::string> {
    if (swapping(p)) return own_refusal(p, transposed_form(s).shape);
    if (s.c_order == Order::col)
      return std::string(
          "this point stores C row-major; a column-major C is computed by points with SWAP_AB=1");
    const GemmForm form = canonical_form(s);
    if (form.shape != s && !own_refusal(p, form.shape)) return std::nullopt;
    return own_refusal(p, s);
  };
  t.geometry = [own_refusal, own_geometry, swapping](const Point& p, const GemmShape& s) {
    if (swapping(p)) return own_geometry(p, transposed_form(s).shape);
    const GemmForm form = canonical_form(s);
    return own_geometry(p, form.shape != s && !own_refusal(p, form.shape) ? form.shape : s);
  };
}

const std::vector<const KernelTemplate*>& all_templates() {
  static const std::vector<const KernelTemplate*> templates = {
      &gemm_mma_template(),        &gemm_mma_tf32_template(), &gemm_mma_fp8_template(),
      &gemm_simt_template(),       &gemm_wgmma_template(),    &gemm_wgmma_fp8_template(),
      &gemm_wgmma_tf32_template(), &gemm_skinny_template(),   &gemm_simt_16bit_template()};
  return templates;
}

const KernelTemplate& find_template(std::string_view name, const SourceLocation& where) {
  std::string known;
  for (const KernelTemplate* t : all_templates()) {
    if (t->name == name) return *t;
    known += (known.empty() ? "" : ", ") + t->name;
  }
  throw Error(ErrorKind::bad_input, "unknown template '" + std::string(name) + "' (known: " + known + ")",
              where);
}

namespace {

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

int64_t parse_integer(std::string_view text, std::string_view id) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size())
    throw Error(ErrorKind::bad_input, "malformed candidate id '" + std::string(id) + "': '" +
                                          std::string(text) + "' is not an integer");
  return value;
}

}  // namespace

Candidate parse_candidate_id(std::string_view id) {
  const auto fail = [&](const std::string& why) {
    return Error(ErrorKind::bad_input, "malformed candidate id '" + std::string(id) + "': " + why);
  };
  const auto parts = split(id, '/');
  if (parts.size() < 3 || parts.size() > 5) throw fail("expected template/types/point[/mutant=N][/perturb=S]");
  Candidate candidate;
  candidate.kernel_template = &find_template(parts[0]);
  const auto types = split(parts[1], '-');
  if (types.size() != 2) throw fail("types must read input-output, e.g. bf16-bf16");
  const auto input = parse_precision(types[0]);
  const auto output = parse_precision(types[1]);
  if (!input || !output) throw fail("unknown element type in '" + std::string(parts[1]) + "'");
  candidate.types = {*input, *output};
  const auto& supported = candidate.kernel_template->supported_types;
  if (std::find(supported.begin(), supported.end(), candidate.types) == supported.end())
    throw fail("template " + candidate.kernel_template->name + " does not compute " + std::string(parts[1]));
  std::vector<std::pair<std::string, int64_t>> values;
  for (const auto& decl : candidate.kernel_template->parameters)
    values.emplace_back(decl.name, decl.default_value);
  std::set<std::string> named;
  for (std::string_view assignment : split(parts[2], ',')) {
    const size_t eq = assignment.find('=');
    if (eq == std::string_view::npos) throw fail("'" + std::string(assignment) + "' is not NAME=VALUE");
    const std::string name(assignment.substr(0, eq));
    const ParameterDecl* decl = candidate.kernel_template->parameter(name);
    if (!decl) throw fail("template " + candidate.kernel_template->name + " has no parameter '" + name + "'");
    if (!named.insert(name).second) throw fail(name + " is given twice");
    const int64_t given = parse_integer(assignment.substr(eq + 1), id);
    if (given < decl->minimum || given > kMaxParameterValue)
      throw fail(name + "=" + std::to_string(given) + " is out of range (" + std::to_string(decl->minimum) +
                 " to " + std::to_string(kMaxParameterValue) + ")");
    for (auto& [key, value] : values)
      if (key == name) value = given;
  }
  candidate.point = Point(std::move(values));
  for (size_t i = 3; i < parts.size(); ++i) {
    if (parts[i].starts_with("mutant=") && i == 3) {
      const int64_t mutant = parse_integer(parts[i].substr(7), id);
      const auto codes = static_cast<int64_t>(candidate.kernel_template->mutants.size());
      if (mutant < 1 || mutant >= codes)
        throw fail("template " + candidate.kernel_template->name +
                   (codes < 2 ? " declares no injected bugs" : " has mutants 1 to " + std::to_string(codes - 1)));
      candidate.mutant = static_cast<int>(mutant);
    } else if (parts[i].starts_with("perturb=") && candidate.perturb == 0) {
      candidate.perturb = parse_integer(parts[i].substr(8), id);
      if (candidate.perturb <= 0 || candidate.perturb > UINT32_MAX)
        throw fail("perturb=S needs a seed from 1 to 2^32 - 1");
    } else {
      throw fail("after the point come mutant=N, then perturb=S");
    }
  }
  return candidate;
}

}  // namespace tunefuzz
