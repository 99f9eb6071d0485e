// CHORUS_BACKEND_MAP and CHORUS_BACKENDS of the torch.distributed backend (src/torch_backend).
#include <gtest/gtest.h>

#include "core/error.h"
#include "torch_backend/backend_map.h"

using chorus::CollectiveKind;
using chorus::InputError;
using chorus::kAllCollectiveKinds;
using chorus::torch_backend::BackendMap;
using chorus::torch_backend::backends_to_init;

TEST(BackendMap, EmptyMeansAutoForEveryOperation) {
  const BackendMap m = BackendMap::parse("", "test");
  for (CollectiveKind op : kAllCollectiveKinds) EXPECT_EQ(m.backend(op), "auto");
  EXPECT_TRUE(m.named_backends().empty());
}

TEST(BackendMap, NamedOperationsAndADefault) {
  const BackendMap m = BackendMap::parse(" all_reduce:shm , alltoall:mpi,*:gloo", "test");
  EXPECT_EQ(m.backend(CollectiveKind::kAllReduce), "shm");
  EXPECT_EQ(m.backend(CollectiveKind::kAllToAll), "mpi");  // the nccl-tests short name
  EXPECT_EQ(m.backend(CollectiveKind::kBroadcast), "gloo");
  EXPECT_EQ(m.backend(CollectiveKind::kAllToAllSingle), "gloo");
  EXPECT_EQ(m.named_backends(), (std::vector<std::string>{"gloo", "shm", "mpi"}));  // order of the operations
}

TEST(BackendMap, TheAlgorithmOperationsMayNameAnAlgorithm) {
  const BackendMap m = BackendMap::parse("all_reduce:mpi:nonoverlapping,broadcast:mpi:binomial,*:shm", "test");
  EXPECT_EQ(m.backend(CollectiveKind::kAllReduce), "mpi:nonoverlapping");
  EXPECT_EQ(m.backend(CollectiveKind::kBroadcast), "mpi:binomial");
  EXPECT_EQ(m.named_backends(), (std::vector<std::string>{"shm", "mpi"}));  // what to initialise
  EXPECT_EQ(BackendMap::parse("alltoall_single:gloo:pairwise_p2p", "t").backend(CollectiveKind::kAllToAllSingle),
            "gloo:pairwise_p2p");
  for (const char* bad :
       {"gather:mpi:ring", "send:mpi:ring", "*:mpi:ring", "all_reduce:auto:ring", "all_reduce:nccl:ring"})
    EXPECT_THROW(BackendMap::parse(bad, "test"), InputError) << bad;
}

TEST(BackendMap, SendAndRecvShareABackend) {
  const BackendMap m = BackendMap::parse("send:shm", "test");
  EXPECT_EQ(m.backend(CollectiveKind::kRecv), "shm");
  EXPECT_EQ(BackendMap::parse("recv:gloo,*:shm", "t").backend(CollectiveKind::kSend), "gloo");
  EXPECT_THROW(BackendMap::parse("send:shm,recv:gloo", "t"), InputError);
}

TEST(BackendMap, ErrorsNameTheEntry) {
  auto message = [](const char* text) {
    try {
      BackendMap::parse(text, "environment CHORUS_BACKEND_MAP");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string bad_backend = message("all_reduce:shm,broadcast:nccl");
  EXPECT_NE(bad_backend.find("entry 2 ('broadcast:nccl')"), std::string::npos) << bad_backend;
  EXPECT_NE(bad_backend.find("unknown backend 'nccl'"), std::string::npos) << bad_backend;
  const std::string bad_op = message("allreduce_fast:shm");
  EXPECT_NE(bad_op.find("entry 1"), std::string::npos) << bad_op;
  EXPECT_NE(bad_op.find("allreduce_fast"), std::string::npos) << bad_op;
  EXPECT_NE(message("all_reduce").find("expected op:backend"), std::string::npos);
  EXPECT_NE(message("all_reduce:shm,all_reduce:gloo").find("given twice"), std::string::npos);
  EXPECT_NE(message("*:shm,*:gloo").find("'*' is given twice"), std::string::npos);
}

TEST(BackendsToInit, DefaultIsAutoAndAListAddsTheMapsBackends) {
  const BackendMap m = BackendMap::parse("all_to_all_single:gloo", "t");
  EXPECT_EQ(backends_to_init(nullptr, m), std::vector<std::string>{"auto"});
  EXPECT_EQ(backends_to_init("  ", m), std::vector<std::string>{"auto"});
  EXPECT_EQ(backends_to_init("shm", m), (std::vector<std::string>{"shm", "gloo"}));
  EXPECT_EQ(backends_to_init("gloo, shm", m), (std::vector<std::string>{"gloo", "shm"}));
  EXPECT_THROW(backends_to_init("shm,shm", m), InputError);
  EXPECT_THROW(backends_to_init("shm,ucc", m), InputError);
}
