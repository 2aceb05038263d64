// echo_server.cc: the gRPC ceiling deltad's GetCatalog is measured against (run by
// tests/bench/grpc/echo.sh, a benchmark, not a test). A C++ async server on Debian's
// grpc++: one registered unary method (the path given, e.g.
// /deltad.catalog.v1.CatalogService/GetCatalog) whose request arrives with the call (raw
// ByteBuffer, no parsing) and whose answer is a fixed message read from a file (the bytes
// deltad sends for the same call), one completion queue and thread per core, many requests
// pre-posted on each queue, as deltad's own workers do.
//
// usage: dd_grpc_echo --method PATH --response FILE [--listen ADDR] [--threads N] [--slots N]
// Prints "echo: listening on HOST:PORT" once ready and serves until SIGTERM/SIGINT.
#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/rpc_service_method.h>
#include <grpcpp/support/async_unary_call.h>
#include <grpcpp/impl/service_type.h>
#include <grpcpp/support/byte_buffer.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

// One raw async unary method; AddMethod/MarkMethodRaw are what generated code calls.
class RawService : public grpc::Service {
 public:
  explicit RawService(const std::string &path) : path_(path) {
    AddMethod(new grpc::internal::RpcServiceMethod(path_.c_str(), grpc::internal::RpcMethod::NORMAL_RPC,
                                                   nullptr));
    MarkMethodRaw(0);
  }
  void Request(grpc::ServerContext *ctx, grpc::ByteBuffer *req,
               grpc::ServerAsyncResponseWriter<grpc::ByteBuffer> *w, grpc::ServerCompletionQueue *cq,
               void *tag) {
    RequestAsyncUnary(0, ctx, req, w, cq, cq, tag);
  }

 private:
  std::string path_;
};

// One call: posted (waiting for a request), then answered, then freed when the answer is sent.
struct Call {
  RawService *svc;
  grpc::ServerCompletionQueue *cq;
  const grpc::ByteBuffer *resp;
  grpc::ServerContext ctx;
  grpc::ByteBuffer req;
  grpc::ServerAsyncResponseWriter<grpc::ByteBuffer> writer{&ctx};
  bool answered = false;

  Call(RawService *s, grpc::ServerCompletionQueue *q, const grpc::ByteBuffer *r) : svc(s), cq(q), resp(r) {
    svc->Request(&ctx, &req, &writer, cq, this);
  }
  void Proceed(bool ok) {
    if (!answered && ok) {
      new Call(svc, cq, resp); // keep the number of pending requests constant
      answered = true;
      writer.Finish(*resp, grpc::Status::OK, this);
      return;
    }
    delete this;
  }
};

std::unique_ptr<grpc::Server> g_server;

void on_signal(int) {
  // Shutdown from a helper thread: it blocks until the calls in flight end.
  std::thread([] { g_server->Shutdown(); }).detach();
}

const char *arg(int argc, char **argv, const char *name, const char *def) {
  for (int i = 1; i + 1 < argc; i++)
    if (!strcmp(argv[i], name)) return argv[i + 1];
  return def;
}

} // namespace

int main(int argc, char **argv) {
  const char *method = arg(argc, argv, "--method", nullptr);
  const char *file = arg(argc, argv, "--response", nullptr);
  std::string listen = arg(argc, argv, "--listen", "127.0.0.1:0");
  int threads = atoi(arg(argc, argv, "--threads", "0"));
  int slots = atoi(arg(argc, argv, "--slots", "64"));
  if (!method || !file || slots <= 0) {
    fprintf(stderr, "usage: dd_grpc_echo --method PATH --response FILE [--listen ADDR] [--threads N] [--slots N]\n");
    return 2;
  }
  if (threads <= 0) threads = (int)std::thread::hardware_concurrency();
  if (threads <= 0) threads = 1;
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    fprintf(stderr, "dd_grpc_echo: cannot read %s\n", file);
    return 1;
  }
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  grpc::Slice slice(bytes);
  grpc::ByteBuffer resp(&slice, 1);

  RawService svc(method);
  grpc::ServerBuilder b;
  int port = 0;
  b.AddListeningPort(listen, grpc::InsecureServerCredentials(), &port);
  b.RegisterService(&svc);
  std::vector<std::unique_ptr<grpc::ServerCompletionQueue>> cqs;
  for (int i = 0; i < threads; i++) cqs.push_back(b.AddCompletionQueue());
  g_server = b.BuildAndStart();
  if (!g_server || port == 0) {
    fprintf(stderr, "dd_grpc_echo: cannot listen on %s\n", listen.c_str());
    return 1;
  }
  std::string host = listen.substr(0, listen.rfind(':'));
  printf("echo: listening on %s:%d\n", host.c_str(), port);
  fflush(stdout);
  signal(SIGTERM, on_signal);
  signal(SIGINT, on_signal);

  std::vector<std::thread> workers;
  for (int i = 0; i < threads; i++) {
    grpc::ServerCompletionQueue *cq = cqs[(size_t)i].get();
    for (int j = 0; j < slots; j++) new Call(&svc, cq, &resp);
    workers.emplace_back([cq] {
      void *tag;
      bool ok;
      while (cq->Next(&tag, &ok)) static_cast<Call *>(tag)->Proceed(ok);
    });
  }
  g_server->Wait();
  for (auto &q : cqs) q->Shutdown();
  for (auto &t : workers) t.join();
  return 0;
}
