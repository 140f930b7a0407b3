# Fetches Apache Maven 3.9.9 (the version .mvn/wrapper/maven-wrapper.properties names) from
# Maven Central into /opt/maven, and fails unless the archive has the SHA-256 below.
import hashlib
import io
import os
import sys
import tarfile
import urllib.request

URL = "https://repo1.maven.org/maven2/org/apache/maven/apache-maven/3.9.9/apache-maven-3.9.9-bin.tar.gz"
SHA256 = "7a9cdf674fc1703d6382f5f330b3d110ea1b512b51f1652846d9e4e8a588d766"

data = urllib.request.urlopen(URL, timeout=300).read()
if hashlib.sha256(data).hexdigest() != SHA256:
    sys.exit("checksum mismatch: " + URL)
with tarfile.open(fileobj=io.BytesIO(data)) as archive:
    archive.extractall("/opt")
os.rename("/opt/apache-maven-3.9.9", "/opt/maven")
