# Fetches each jar that jars.txt names ("<Maven Central path> <sha256>" a line) into the current
# folder, and fails unless its bytes have that SHA-256.
import hashlib
import os
import sys
import urllib.request

for line in open("jars.txt", encoding="utf-8"):
    if not line.strip():
        continue
    path, sha = line.split()
    data = urllib.request.urlopen("https://repo1.maven.org/maven2/" + path, timeout=300).read()
    if hashlib.sha256(data).hexdigest() != sha:
        sys.exit("checksum mismatch: " + path)
    with open(os.path.basename(path), "wb") as out:
        out.write(data)
