// The rank programs of the real studies as argv (eval/real/rank_programs.h): the same command
// lines the studies ran as shell strings before, word by word.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "eval/real/rank_programs.h"

namespace {

using chorus::eval::rank_argv;
using Argv = std::vector<std::string>;

TEST(RankPrograms, CollectiveAsThemisRealRunsIt) {
  chorus::eval::RunCollectiveArgs a;
  a.topology = "out/networks/my net.yaml";
  a.size = "8MiB";
  a.chunks = 8;
  a.scheduler = "themis-fifo";
  a.emulate = true;
  a.iters = 5;
  a.warmup = 1;
  a.dim_backends = "shm";
  EXPECT_EQ(rank_argv("/bin/chorus", a),
            (Argv{"/bin/chorus", "run", "collective", "-t", "out/networks/my net.yaml", "--size", "8MiB", "--chunks",
                  "8", "--scheduler", "themis-fifo", "--emulate", "--iters", "5", "--warmup", "1", "--dim-backends",
                  "shm", "--json"}));
  a.emulate = false;
  a.json = false;
  EXPECT_EQ(rank_argv("chorus", a),
            (Argv{"chorus", "run", "collective", "-t", "out/networks/my net.yaml", "--size", "8MiB", "--chunks", "8",
                  "--scheduler", "themis-fifo", "--iters", "5", "--warmup", "1", "--dim-backends", "shm"}));
}

TEST(RankPrograms, MotifsAsSyndicateRealRunsIt) {
  chorus::eval::RunMotifsArgs a;
  a.sizes = "256KiB,1MiB";
  a.repeat = 3;
  EXPECT_EQ(rank_argv("/bin/chorus", a),
            (Argv{"/bin/chorus", "run", "motifs", "--sizes", "256KiB,1MiB", "--repeat", "3", "--json"}));
}

}  // namespace
