#!/usr/bin/env python3
"""An S3 endpoint that checks every request's AWS Signature V4 the way AWS documents
it (canonical request, string to sign, the derived key), written apart from libcurl so
that a signature curl gets wrong fails here. moto, the other test server, checks none.

Usage: sigv4_server.py PORT ACCESS_KEY SECRET REGION
A PUT with a good signature and a matching Content-MD5 gets 200 and ETag = MD5 of the
body; a bad signature gets 403 SignatureDoesNotMatch; a bad MD5 400 BadDigest. Each
request's verdict is printed as one line on stdout.
"""
import base64, hashlib, hmac, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote

PORT, ACCESS_KEY, SECRET, REGION = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]


def sign(key, message):
    return hmac.new(key, message.encode(), hashlib.sha256).digest()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, code=None, etag=None):
        body = b"" if code is None else f"<Error><Code>{code}</Code><Message>{code}</Message></Error>".encode()
        self.send_response(status)
        if etag:
            self.send_header("ETag", f'"{etag}"')
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        print(f"{self.command} {self.path} {status} {code or 'OK'}", flush=True)

    def verify(self, body):
        auth = self.headers.get("Authorization", "")
        if not auth.startswith("AWS4-HMAC-SHA256 "):
            return "MissingSecurityHeader"
        fields = dict(part.strip().split("=", 1) for part in auth[len("AWS4-HMAC-SHA256 "):].split(","))
        access, date, region, service, terminal = fields["Credential"].split("/")
        if access != ACCESS_KEY:
            return "InvalidAccessKeyId"
        if (region, service, terminal) != (REGION, "s3", "aws4_request"):
            return "AuthorizationHeaderMalformed"
        stamp = self.headers.get("x-amz-date", "")
        signed = fields["SignedHeaders"].split(";")
        if "host" not in signed or "x-amz-date" not in signed or not stamp.startswith(date):
            return "AccessDenied"
        payload = self.headers.get("x-amz-content-sha256")
        if payload is None:
            return "InvalidRequest"  # S3 wants the header
        if payload != "UNSIGNED-PAYLOAD" and payload != hashlib.sha256(body).hexdigest():
            return "XAmzContentSHA256Mismatch"
        path, _, query = self.path.partition("?")
        canonical_query = "&".join(sorted(
            f"{quote(k, safe='-_.~')}={quote(v, safe='-_.~')}" for k, _, v in (p.partition("=") for p in query.split("&") if p)))
        headers = "".join(f"{name}:{' '.join((self.headers.get(name) or '').split())}\n" for name in signed)
        canonical = "\n".join([self.command, quote(path, safe="/-_.~"), canonical_query, headers, fields["SignedHeaders"], payload])
        scope = f"{date}/{REGION}/s3/aws4_request"
        to_sign = "\n".join(["AWS4-HMAC-SHA256", stamp, scope, hashlib.sha256(canonical.encode()).hexdigest()])
        key = sign(sign(sign(sign(("AWS4" + SECRET).encode(), date), REGION), "s3"), "aws4_request")
        expected = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
        return None if hmac.compare_digest(expected, fields["Signature"]) else "SignatureDoesNotMatch"

    def do_PUT(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        problem = self.verify(body)
        if problem:
            return self.reply(403, problem)
        md5 = self.headers.get("Content-MD5")
        if md5 is not None and base64.b64decode(md5) != hashlib.md5(body).digest():
            return self.reply(400, "BadDigest")
        self.reply(200, etag=hashlib.md5(body).hexdigest())


ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
