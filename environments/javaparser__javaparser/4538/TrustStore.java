// Makes a Java trust store (PKCS12) of the certificates of a PEM bundle, for Maven's JVM, which
// reads no CA file from the environment: `java TrustStore.java BUNDLE OUT`. The build gets the
// bundle Proctor offers it in SSL_CERT_FILE when the host fetches through a TLS-inspecting proxy.
import java.io.ByteArrayInputStream;
import java.io.FileOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public class TrustStore {
    public static void main(String[] args) throws Exception {
        String text = Files.readString(Path.of(args[0]), StandardCharsets.ISO_8859_1);
        Matcher block = Pattern.compile("-----BEGIN CERTIFICATE-----.*?-----END CERTIFICATE-----", Pattern.DOTALL).matcher(text);
        CertificateFactory factory = CertificateFactory.getInstance("X.509");
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(null, null);
        int count = 0;
        while (block.find()) {
            byte[] pem = block.group().getBytes(StandardCharsets.ISO_8859_1);
            Certificate certificate = factory.generateCertificate(new ByteArrayInputStream(pem));
            store.setCertificateEntry("ca" + count++, certificate);
        }
        try (FileOutputStream out = new FileOutputStream(args[1])) {
            store.store(out, "changeit".toCharArray());
        }
        System.out.println(count + " certificates in " + args[1]);
    }
}
