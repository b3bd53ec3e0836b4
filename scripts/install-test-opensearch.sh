#!/usr/bin/env bash
# Installs the OpenSearch the test suite runs quarry's OpenSearch store against: OpenSearch
# 2.19.1 (the integ-test distribution: the server with its netty transport, no bundled JDK)
# with the k-NN plugin, and the modules k-NN and quarry's store need that the integ-test zip
# leaves out (lang-painless, analysis-common, reindex: delete- and update-by-query), all from
# Maven Central, into
# QUARRY_TEST_OPENSEARCH_HOME:
#   as root:   /opt/quarry/test-opensearch (outside /root, so the server's own user can read it)
#   otherwise: ${XDG_DATA_HOME:-~/.local/share}/quarry/test-opensearch
# OpenSearch refuses to run as root; as root this also creates the system user
# `quarry-search` that the tests start the nodes as (crates/quarry-test-opensearch).
#
# Needs Java 17 or later (2.19 runs on 17; the 3.x line needs 21 and has no matching k-NN on
# Maven Central) and Maven (mvn), which resolves the artifacts. The modules are not
# published as plugin zips, only as jars: they are laid out here as OpenSearch's own build
# lays them out (the jars, their runtime dependencies, a plugin descriptor).
set -euo pipefail
OPENSEARCH=2.19.1
KNN=2.19.1.0
STAMP="$OPENSEARCH+knn-$KNN+painless+analysis-common+reindex"
if [ "$(id -u)" = 0 ]; then
    home="${QUARRY_TEST_OPENSEARCH_HOME:-/opt/quarry/test-opensearch}"
    if ! id quarry-search >/dev/null 2>&1; then
        useradd --system --no-create-home --shell /usr/sbin/nologin quarry-search
    fi
else
    home="${QUARRY_TEST_OPENSEARCH_HOME:-${XDG_DATA_HOME:-$HOME/.local/share}/quarry/test-opensearch}"
fi
server="$home/opensearch"
if [ -x "$server/bin/opensearch" ] && [ "$(cat "$home/.version" 2>/dev/null)" = "$STAMP" ]; then
    exit 0
fi

# A Java of 17 or later: OPENSEARCH_JAVA_HOME, JAVA_HOME, the system's 17, or java on PATH.
java_version() { "$1/bin/java" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1; }
java_home=""
for candidate in "${OPENSEARCH_JAVA_HOME:-}" "${JAVA_HOME:-}" /usr/lib/jvm/java-17-openjdk-* /usr/lib/jvm/java-21-openjdk-* \
    "$(dirname "$(dirname "$(readlink -f "$(command -v java 2>/dev/null || echo /nonexistent)")")")"; do
    if [ -n "$candidate" ] && [ -x "$candidate/bin/java" ] && [ "$(java_version "$candidate")" -ge 17 ] 2>/dev/null; then
        java_home="$candidate"
        break
    fi
done
# A fresh Debian machine gets them from apt (as root), as the other install scripts do.
apt_install() {
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        apt-get install -y "$@" >&2 || { apt-get update >&2 && apt-get install -y "$@" >&2; }
    else
        return 1
    fi
}
if [ -z "$java_home" ] && apt_install openjdk-17-jdk-headless; then
    java_home=$(ls -d /usr/lib/jvm/java-17-openjdk-* 2>/dev/null | head -1)
fi
if ! command -v mvn >/dev/null 2>&1; then
    apt_install maven || true
fi
if [ -z "$java_home" ]; then
    echo "install-test-opensearch.sh: OpenSearch $OPENSEARCH needs Java 17 or later: install it (e.g. 'apt-get install openjdk-17-jdk-headless') or set OPENSEARCH_JAVA_HOME." >&2
    exit 1
fi
if ! command -v mvn >/dev/null 2>&1; then
    echo "install-test-opensearch.sh: Maven (mvn) is needed to fetch OpenSearch from Maven Central: install it (e.g. 'apt-get install maven')." >&2
    exit 1
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mvn_quietly() { # mvn ARGS...: its output only when it fails
    local out
    if ! out="$(JAVA_HOME="$java_home" mvn -q -B "$@" 2>&1)"; then
        echo "$out" >&2
        echo "install-test-opensearch.sh: Maven could not resolve the artifacts above from Maven Central." >&2
        exit 1
    fi
}
fetch() { # GROUP:ARTIFACT:VERSION:TYPE into $work/zips
    mvn_quietly org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy \
        -Dartifact="$1" -DoutputDirectory="$work/zips" -Dmdep.useBaseVersion=true
}
fetch "org.opensearch.distribution.integ-test-zip:opensearch:$OPENSEARCH:zip"
fetch "org.opensearch.plugin:opensearch-knn:$KNN:zip"
# The modules' jars with their runtime dependencies.
cat > "$work/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>quarry</groupId><artifactId>test-opensearch-modules</artifactId><version>1</version>
  <dependencies>
    <dependency><groupId>org.opensearch.plugin</groupId><artifactId>lang-painless</artifactId><version>$OPENSEARCH</version></dependency>
    <dependency><groupId>org.opensearch.plugin</groupId><artifactId>analysis-common</artifactId><version>$OPENSEARCH</version></dependency>
    <dependency><groupId>org.opensearch.plugin</groupId><artifactId>reindex-client</artifactId><version>$OPENSEARCH</version></dependency>
  </dependencies>
</project>
EOF
(cd "$work" && mvn_quietly org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies \
    -DoutputDirectory="$work/jars" -DincludeScope=runtime)

rm -rf "$home"
mkdir -p "$home"
unzip -q "$work/zips/opensearch-$OPENSEARCH.zip" -d "$work/unpacked"
mv "$work/unpacked/opensearch-$OPENSEARCH" "$server"

descriptor() { # NAME CLASSNAME EXTENDS DESCRIPTION
    cat <<EOF
description=$4
version=$OPENSEARCH
name=$1
classname=$2
java.version=11
opensearch.version=$OPENSEARCH
extended.plugins=$3
has.native.controller=false
EOF
}
painless="$server/plugins/lang-painless"
mkdir -p "$painless"
for jar in lang-painless antlr4-runtime asm asm-analysis asm-commons asm-tree asm-util opensearch-scripting-painless-spi; do
    cp "$work"/jars/"$jar"-[0-9]*.jar "$painless/"
done
descriptor lang-painless org.opensearch.painless.PainlessPlugin "" \
    "An easy, safe and fast scripting language for OpenSearch" > "$painless/plugin-descriptor.properties"
cat > "$painless/plugin-security.policy" <<'EOF'
grant {
  // needed to generate runtime classes
  permission java.lang.RuntimePermission "createClassLoader";
  // needed to find the classloader to load allowlisted classes from
  permission java.lang.RuntimePermission "getClassLoader";
};
EOF
analysis="$server/plugins/analysis-common"
mkdir -p "$analysis"
cp "$work"/jars/analysis-common-[0-9]*.jar "$analysis/"
descriptor analysis-common org.opensearch.analysis.common.CommonAnalysisPlugin lang-painless \
    "Adds analysis components: the whitespace tokenizer, the porter_stem and asciifolding filters, ..." \
    > "$analysis/plugin-descriptor.properties"
reindex="$server/plugins/reindex"
mkdir -p "$reindex"
# The reindex module with its REST client (remote reindex), as OpenSearch ships it; the
# server's own jars (lib/) are not copied again.
for jar in "$work"/jars/*.jar; do
    name="$(basename "$jar")"
    case "$name" in
        lang-painless-* | antlr4-* | asm-* | opensearch-scripting-painless-spi-* | analysis-common-*) ;;
        *) [ -e "$server/lib/$name" ] || cp "$jar" "$reindex/" ;;
    esac
done
descriptor reindex org.opensearch.index.reindex.ReindexPlugin "" \
    "The Reindex module adds APIs to reindex from one index to another or update documents in place." \
    > "$reindex/plugin-descriptor.properties"
cat > "$reindex/plugin-security.policy" <<'EOF'
grant {
  // reindex from a remote cluster opens socket connections using the rest client
  permission java.net.SocketPermission "*", "connect";
  permission java.net.NetPermission "getProxySelector";
};
EOF

# (The plugin tool warns that the integ-test zip bundles no JDK: that is why Java is given.)
OPENSEARCH_JAVA_HOME="$java_home" "$server/bin/opensearch-plugin" install --batch --silent \
    "file://$work/zips/opensearch-knn-$KNN.zip" 2>&1 | grep -v "no-jdk distributions" >&2 || true
[ -d "$server/plugins/opensearch-knn" ] || { echo "install-test-opensearch.sh: the k-NN plugin did not install" >&2; exit 1; }
echo "$java_home" > "$home/java-home"
echo "$STAMP" > "$home/.version"
chmod -R a+rX "$home"
echo "test OpenSearch installed: $OPENSEARCH with k-NN $KNN, lang-painless, analysis-common and reindex, in $server (Java: $java_home)" >&2
