#!/usr/bin/python3
"""test_wire.py PROTO_DIR VECTORS: wire compatibility of the Delta Connect / Spark Connect
protos. Builds Python stubs from PROTO_DIR with grpc_tools.protoc (into a temp dir), builds
each message of wire_vectors.txt field by field, and requires its serialization to equal
the hand-written hex byte for byte (and the hex to parse back to an equal message). The
hex was derived from the spec's field numbers, so a wrong number or type fails here."""
import os
import subprocess
import sys
import tempfile

FILES = ["delta/connect/base.proto", "delta/connect/commands.proto",
         "delta/connect/relations.proto", "spark/connect/types.proto",
         "spark/connect/expressions.proto", "spark/connect/relations.proto",
         "spark/connect/commands.proto", "spark/connect/base.proto",
         "deltad/connect/v1/connect.proto", "google/api/http.proto",
         "google/api/annotations.proto"]


def build_stubs(proto_dir):
    out = tempfile.mkdtemp(prefix="connect_proto_")
    subprocess.check_call([sys.executable, "-m", "grpc_tools.protoc", "-I" + proto_dir,
                           "-I/usr/include", "--python_out=" + out] + FILES)
    sys.path.insert(0, out)


def load_vectors(path):
    vec = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                name, hexstr = line.split()
                vec[name] = bytes.fromhex(hexstr)
    return vec


def messages():
    from delta.connect import commands_pb2 as dc, relations_pb2 as dr
    from spark.connect import base_pb2 as sb
    from deltad.connect.v1 import connect_pb2 as cv

    m = {}
    vac = dc.DeltaCommand()
    vac.vacuum_table.table.path.path = "/tmp/t"
    vac.vacuum_table.retention_hours = 168.0
    m["vacuum"] = vac

    vac0 = dc.DeltaCommand()
    vac0.vacuum_table.table.path.path = "/tmp/t"
    vac0.vacuum_table.retention_hours = 0.0
    m["vacuum0"] = vac0

    clone = dc.DeltaCommand()
    clone.clone_table.table.table_or_view_name = "main.s.t"
    clone.clone_table.target = "/c"
    clone.clone_table.version = 3
    clone.clone_table.is_shallow = True
    clone.clone_table.properties["k"] = "v"
    m["clone"] = clone

    plan = sb.Plan()
    plan.command.extension.Pack(vac)
    m["plan"] = plan

    resp = sb.ExecutePlanResponse(session_id="s", operation_id="op", response_id="r1",
                                  server_side_session_id="ss")
    resp.arrow_batch.row_count = 2
    resp.arrow_batch.data = b"\xff\xff\xff\xff"
    resp.arrow_batch.start_offset = 0
    m["response"] = resp

    rest = dr.DeltaRelation()
    rest.restore_table.table.path.path = "/t"
    rest.restore_table.version = 5
    m["restore"] = rest

    create = dc.DeltaCommand()
    cdt = create.create_delta_table
    cdt.mode = dc.CreateDeltaTable.MODE_CREATE_IF_NOT_EXISTS
    cdt.location = "/d"
    col = cdt.columns.add(name="a", nullable=True)
    col.data_type.unparsed.data_type_string = "decimal(10,2)"
    m["create"] = create

    row = cv.ExecuteResult()
    row.row.values.add(null_value=True)
    row.row.values.add(int64_value=-1)
    row.row.values.add(string_value="x")
    m["row"] = row

    scan = dr.DeltaRelation()
    scan.scan.table.path.path = "/t"
    delete = dr.DeltaRelation()
    delete.delete_from_table.target.extension.Pack(scan)
    delete.delete_from_table.condition.expression_string.expression = "id > 5"
    m["delete"] = delete

    an = sb.AnalyzePlanResponse(session_id="s")
    fld = an.schema.schema.struct.fields.add(name="id", nullable=True)
    fld.data_type.long.SetInParent()
    m["analyze"] = an

    cfg = sb.ConfigResponse()
    cfg.pairs.add(key="a", value="")
    m["config"] = cfg
    return m


# RPC name -> (request, response, server streaming), as in Spark 4.0 and deltad's service.
SERVICES = {
    "spark.connect.SparkConnectService": {
        "ExecutePlan": ("ExecutePlanRequest", "ExecutePlanResponse", True),
        "AnalyzePlan": ("AnalyzePlanRequest", "AnalyzePlanResponse", False),
        "Config": ("ConfigRequest", "ConfigResponse", False),
        "Interrupt": ("InterruptRequest", "InterruptResponse", False),
        "ReattachExecute": ("ReattachExecuteRequest", "ExecutePlanResponse", True),
        "ReleaseExecute": ("ReleaseExecuteRequest", "ReleaseExecuteResponse", False),
        "ReleaseSession": ("ReleaseSessionRequest", "ReleaseSessionResponse", False),
    },
    "deltad.connect.v1.DeltaConnectService": {
        "ExecuteCommand": ("delta.connect.DeltaCommand", "ExecuteResult", True),
        "ExecuteRelation": ("delta.connect.DeltaRelation", "ExecuteResult", True),
        "ExecuteQuery": ("spark.connect.Relation", "ExecuteResult", True),
    },
}
HTTP = {"ExecuteCommand": "/api/v1/delta/commands", "ExecuteRelation": "/api/v1/delta/relations",
        "ExecuteQuery": "/api/v1/delta/query"}


def short_name(package, type_name):
    """A message's name relative to package (".spark.connect.Plan" -> "Plan")."""
    name = type_name.lstrip(".")
    return name[len(package) + 1:] if name.startswith(package + ".") else name


def check_services():
    """Method names, types and streaming of both services, and the REST bindings."""
    from google.protobuf import descriptor_pb2
    from google.api import annotations_pb2
    from spark.connect import base_pb2
    from deltad.connect.v1 import connect_pb2
    failures = 0
    for mod in (base_pb2, connect_pb2):
        fdp = descriptor_pb2.FileDescriptorProto()
        mod.DESCRIPTOR.CopyToProto(fdp)
        for svc in fdp.service:
            full = fdp.package + "." + svc.name
            want = SERVICES[full]
            got = {}
            for m in svc.method:
                got[m.name] = (short_name(fdp.package, m.input_type),
                               short_name(fdp.package, m.output_type), m.server_streaming)
                if m.client_streaming:
                    got[m.name] += ("client streaming",)
                if m.name in HTTP:
                    rule = m.options.Extensions[annotations_pb2.http]
                    if rule.post != HTTP[m.name] or rule.body != "*":
                        print("FAIL %s.%s: http rule %s" % (full, m.name, rule))
                        failures += 1
            if got != want:
                print("FAIL %s\n  got  %s\n  want %s" % (full, got, want))
                failures += 1
            else:
                print("ok   %s (%d methods)" % (full, len(got)))
    return failures


def main():
    proto_dir, vectors = sys.argv[1], sys.argv[2]
    build_stubs(proto_dir)
    expected = load_vectors(vectors)
    built = messages()
    failures = 0
    if set(built) != set(expected):
        print("vector names differ: %s vs %s" % (sorted(built), sorted(expected)))
        failures += 1
    for name, msg in sorted(built.items()):
        want = expected.get(name)
        got = msg.SerializeToString(deterministic=True)
        if got != want:
            print("FAIL %s\n  got  %s\n  want %s" % (name, got.hex(), want.hex() if want else None))
            failures += 1
            continue
        back = type(msg)()
        back.ParseFromString(want)
        if back != msg:
            print("FAIL %s: parsing the expected bytes gives a different message" % name)
            failures += 1
            continue
        print("ok   %s (%d bytes)" % (name, len(got)))
    failures += check_services()
    # The Any type URL the Delta client uses must name our message.
    if not built["plan"].command.extension.type_url.endswith("/delta.connect.DeltaCommand"):
        print("FAIL plan: unexpected type URL %s" % built["plan"].command.extension.type_url)
        failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
