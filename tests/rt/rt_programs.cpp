// The runtime's multi-process test programs, in one executable. tests/rt/rt_check and the
// others are links to it, and it runs the program its name says (or the one named first:
// `rt_programs rt_check --help`). Each program is a few hundred lines over CLI11 and the
// runtime; compiling their shared part once instead of nine times is most of their build
// (BENCHMARKS-history.md, "CI time").
#include <cstdio>
#include <cstring>
#include <string_view>

namespace rt_check_program {
int run(int argc, char** argv);
}
namespace rt_mixing_program {
int run(int argc, char** argv);
}
namespace rt_fail_program {
int run(int argc, char** argv);
}
namespace rt_fusion_check_program {
int run(int argc, char** argv);
}
namespace rt_groups_program {
int run(int argc, char** argv);
}
namespace rt_schedule_check_program {
int run(int argc, char** argv);
}
namespace rt_store_attack_program {
int run(int argc, char** argv);
}
namespace rt_timeout_program {
int run(int argc, char** argv);
}
namespace rt_disagree_program {
int run(int argc, char** argv);
}
namespace rt_compression_check_program {
int run(int argc, char** argv);
}

namespace {

struct Program {
  std::string_view name;
  int (*run)(int, char**);
};

constexpr Program kPrograms[] = {
    {"rt_check", rt_check_program::run},
    {"rt_mixing", rt_mixing_program::run},
    {"rt_fail", rt_fail_program::run},
    {"rt_fusion_check", rt_fusion_check_program::run},
    {"rt_groups", rt_groups_program::run},
    {"rt_schedule_check", rt_schedule_check_program::run},
    {"rt_store_attack", rt_store_attack_program::run},
    {"rt_timeout", rt_timeout_program::run},
    {"rt_disagree", rt_disagree_program::run},
    {"rt_compression_check", rt_compression_check_program::run},
};

std::string_view base_name(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash != nullptr ? slash + 1 : path;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view self = argc > 0 ? base_name(argv[0]) : std::string_view();
  for (const Program& p : kPrograms)
    if (self == p.name) return p.run(argc, argv);
  if (argc > 1)
    for (const Program& p : kPrograms)
      if (std::string_view(argv[1]) == p.name) return p.run(argc - 1, argv + 1);
  std::fprintf(stderr, "usage: rt_programs PROGRAM [ARGS...], or a link named PROGRAM; the programs:");
  for (const Program& p : kPrograms) std::fprintf(stderr, " %.*s", static_cast<int>(p.name.size()), p.name.data());
  std::fprintf(stderr, "\n");
  return 2;
}
