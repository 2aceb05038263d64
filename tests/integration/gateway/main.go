// main.go: a grpc-gateway in front of deltad's gRPC port, generated from deltad's protos
// (their google.api.http annotations), for integration.gateway: the same routes deltad's own
// REST port serves, transcoded by an independent implementation of the rules.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protojson"

	admin "ddgw/pb/deltad/admin/v1"
	catalog "ddgw/pb/deltad/catalog/v1"
	connect "ddgw/pb/deltad/connect/v1"
	credentials "ddgw/pb/deltad/credentials/v1"
	sharing "ddgw/pb/deltad/sharing/v1"
	system "ddgw/pb/deltad/system/v1"
	tables "ddgw/pb/deltad/tables/v1"
)

func main() {
	backend := flag.String("backend", "127.0.0.1:50051", "deltad's gRPC address")
	listen := flag.String("listen", "127.0.0.1:0", "address to serve REST on")
	flag.Parse()
	ctx := context.Background()
	// Proto3 JSON as Envoy's transcoder and deltad send it: defaults left out, JSON names.
	mux := runtime.NewServeMux(runtime.WithMarshalerOption(runtime.MIMEWildcard, &runtime.JSONPb{
		MarshalOptions:   protojson.MarshalOptions{EmitUnpopulated: false},
		UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: false},
	}))
	opts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	regs := []func(context.Context, *runtime.ServeMux, string, []grpc.DialOption) error{
		admin.RegisterAdminServiceHandlerFromEndpoint,
		catalog.RegisterCatalogServiceHandlerFromEndpoint,
		tables.RegisterTablesServiceHandlerFromEndpoint,
		credentials.RegisterCredentialServiceHandlerFromEndpoint,
		connect.RegisterDeltaConnectServiceHandlerFromEndpoint,
		system.RegisterSystemServiceHandlerFromEndpoint,
		sharing.RegisterDeltaSharingServiceHandlerFromEndpoint,
		sharing.RegisterDeltaSharingExtensionServiceHandlerFromEndpoint,
	}
	for _, r := range regs {
		if err := r(ctx, mux, *backend, opts); err != nil {
			fmt.Fprintln(os.Stderr, "gateway:", err)
			os.Exit(1)
		}
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gateway:", err)
		os.Exit(1)
	}
	fmt.Printf("gateway: listening on %s\n", ln.Addr())
	os.Stdout.Sync()
	if err := http.Serve(ln, mux); err != nil {
		fmt.Fprintln(os.Stderr, "gateway:", err)
		os.Exit(1)
	}
}
