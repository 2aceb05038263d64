"""tls_certs.py: throwaway certificates for the TLS tests, made with the openssl command.

Certs(dir) makes a CA, then on demand server certificates (SAN IP:127.0.0.1 and
DNS:localhost, serverAuth) and client certificates (clientAuth) signed by it, each with
the serial number asked for, so a test can tell which certificate a handshake presented.
A second, unrelated CA (Certs(dir, "rogue")) signs certificates the server must refuse."""
import os
import socket
import ssl
import subprocess


def _openssl(*args, stdin=None):
    subprocess.run(["openssl"] + list(args), check=True, capture_output=True, input=stdin)


class Certs:
    def __init__(self, directory, name="ca"):
        self.dir = directory
        self.name = name
        self.ca_key = self.path(name + ".key")
        self.ca_cert = self.path(name + ".pem")
        _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                 "-nodes", "-keyout", self.ca_key, "-out", self.ca_cert, "-days", "2",
                 "-subj", "/CN=deltad test %s" % name,
                 "-addext", "basicConstraints=critical,CA:TRUE",
                 "-addext", "keyUsage=critical,keyCertSign,cRLSign")

    def path(self, name):
        return os.path.join(self.dir, name)

    def _issue(self, base, serial, cn, ext):
        key, csr, cert = self.path(base + ".key"), self.path(base + ".csr"), self.path(base + ".pem")
        extfile = self.path(base + ".ext")
        with open(extfile, "w") as f:
            f.write(ext)
        _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr,
                 "-subj", "/CN=" + cn)
        _openssl("x509", "-req", "-in", csr, "-CA", self.ca_cert, "-CAkey", self.ca_key,
                 "-set_serial", str(serial), "-days", "1", "-out", cert, "-extfile", extfile)
        return cert, key

    def server(self, base, serial):
        """(cert, key) paths for 127.0.0.1 / localhost."""
        return self._issue(base, serial, "127.0.0.1",
                           "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                           "extendedKeyUsage=serverAuth\nkeyUsage=digitalSignature,keyEncipherment\n")

    def client(self, base, serial):
        return self._issue(base, serial, "recipient-" + base,
                           "extendedKeyUsage=clientAuth\nkeyUsage=digitalSignature\n")


def read(path):
    with open(path, "rb") as f:
        return f.read()


def peer_serial(port, cafile, alpn=None):
    """The serial number (an int) of the certificate 127.0.0.1:port presents in a fresh
    handshake verified against cafile."""
    ctx = ssl.create_default_context(cafile=cafile)
    if alpn:
        ctx.set_alpn_protocols(alpn)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with ctx.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            return int(tls.getpeercert()["serialNumber"], 16)
