# Real-program workload for perl under libmemtop.so: big hashes, string
# building, regexes and sorting; prints a digest of the results.
use strict;
use warnings;
use Digest::MD5 qw(md5_hex);

my %h;
for my $i (1 .. 60000) {
    $h{"key$i"} = join(",", ($i) x ($i % 7)) . reverse("v$i");
}
my @keys = sort { length($h{$a}) <=> length($h{$b}) or $a cmp $b } keys %h;
my $joined = join("|", map { $h{$_} } @keys[0 .. 999]);
my $count = () = $joined =~ /(\d+)v/g;
my %words;
$words{$_}++ for split /[,|]/, $joined;
delete $h{"key$_"} for 1 .. 30000;
printf "%d keys left, %d matches, %d words, md5 %s\n", scalar(keys %h), $count,
    scalar(keys %words), md5_hex($joined);
exit 0;
